# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Every source file names its copyright holder and licence, as ament_copyright checks in a ROS package.

The licence is package.xml's (Apache-2.0), whose full text is LICENSE at the repository root.
ament_copyright itself is not on PyPI; this is its rule for the files it reads.
"""
import os
import subprocess
import xml.etree.ElementTree as ElementTree

from ros_fixtures import PACKAGE_ROOT

REPOSITORY = os.path.dirname(PACKAGE_ROOT)
SOURCES = ("*.py", "*.sh", "*.cmake", "*CMakeLists.txt", ".ci/run")
COPYRIGHT = "# Copyright "
LICENCE = "# SPDX-License-Identifier: Apache-2.0"


def _sources():
    listed = subprocess.run(["git", "ls-files", *SOURCES], cwd=REPOSITORY, capture_output=True,
                            text=True, check=True).stdout.split()
    return [os.path.join(REPOSITORY, name) for name in listed]


def _head(path, lines=4):
    with open(path, encoding="utf-8") as handle:
        return [handle.readline().rstrip("\n") for _ in range(lines)]


def test_every_source_file_carries_the_copyright_and_the_package_licence():
    files = _sources()
    assert len(files) > 200
    missing = [os.path.relpath(p, REPOSITORY) for p in files
               if not any(line.startswith(COPYRIGHT) for line in _head(p))
               or LICENCE not in _head(p)]
    assert missing == [], f"no copyright and licence lines in the first lines of: {missing}"


def test_the_licence_named_is_the_packages_and_its_text_is_there():
    for package in ("robo_reward_ros", "robo_reward_msgs"):
        tree = ElementTree.parse(os.path.join(REPOSITORY, package, "package.xml"))
        assert [e.text for e in tree.getroot().findall("license")] == ["Apache-2.0"]
    with open(os.path.join(REPOSITORY, "LICENSE"), encoding="utf-8") as handle:
        text = handle.read()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
