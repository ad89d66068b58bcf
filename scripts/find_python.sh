# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
# Sourced by scripts/setup.sh (and run by the compile test): find_python NAME prints a working
# interpreter called NAME (python3.10, ...) that runs Python 3.10-3.12, or fails.
# A name on PATH may be a pyenv shim that refuses a version pyenv has but has not selected: then
# take that version's own interpreter, from $PYENV_ROOT, ~/.pyenv, or the pyenv the shim belongs
# to (HOME can differ from the user who installed pyenv: a fresh HOME, CI, sudo).
find_python() {
  local name=$1 found pyenv candidate
  local supported='import sys; assert (3, 10) <= sys.version_info[:2] <= (3, 12)'
  local roots=("${PYENV_ROOT:-$HOME/.pyenv}")
  found=$(command -v "$name" 2>/dev/null || true)
  case $found in */shims/*) roots+=("${found%/shims/*}") ;; esac
  if "$name" -c "$supported" 2>/dev/null; then echo "$name"; return 0; fi
  for pyenv in "${roots[@]}"; do
    for candidate in "$pyenv"/versions/"${name#python}".*/bin/"$name"; do
      if "$candidate" -c "$supported" 2>/dev/null; then echo "$candidate"; return 0; fi
    done
  done
  return 1
}
