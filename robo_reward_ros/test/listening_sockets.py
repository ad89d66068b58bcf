# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The TCP ports a process tree listens on, read from /proc (Linux): what a peer could connect to."""
import os
from typing import Dict, List, Set, Tuple

from proc_stat import stat_fields


def _tree(root: int) -> Set[int]:
    """``root`` and every process below it (children found through /proc/*/stat's parent field)."""
    parents: Dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)] = int(stat_fields(f"/proc/{entry}/stat")[1])
            except OSError:
                continue
    tree, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent and pid not in tree]
        tree.update(children)
        frontier.extend(children)
    return tree


def _socket_inodes(pids: Set[int]) -> Dict[int, int]:
    inodes: Dict[int, int] = {}
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                except OSError:
                    continue
                if target.startswith("socket:["):
                    inodes[int(target[8:-1])] = pid
        except OSError:
            continue
    return inodes


def _address(hex_address: str) -> Tuple[str, int]:
    host, port = hex_address.split(":")
    raw = bytes.fromhex(host)
    if len(raw) == 4:
        host = ".".join(str(b) for b in raw[::-1])
    else:  # IPv6: four little-endian 32-bit words
        words = [raw[i:i + 4][::-1] for i in range(0, 16, 4)]
        host = ":".join(b"".join(words)[i:i + 2].hex() for i in range(0, 16, 2))
    return host, int(port, 16)


def listening_sockets(root: int) -> List[Tuple[str, int, str]]:
    """(address, port, command name) of every TCP listener in the process tree of ``root``."""
    owners = _socket_inodes(_tree(root))
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as handle:
            for line in handle.readlines()[1:]:
                fields = line.split()
                if fields[3] != "0A" or int(fields[9]) not in owners:  # 0A: LISTEN
                    continue
                host, port = _address(fields[1])
                with open(f"/proc/{owners[int(fields[9])]}/comm") as comm:
                    found.append((host, port, comm.read().strip()))
    return sorted(set(found))
