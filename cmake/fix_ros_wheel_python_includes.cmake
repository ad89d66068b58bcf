# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
# Passed as -DCMAKE_PROJECT_INCLUDE=... when building interface packages against the ROS 2
# PyPI wheels (no system ROS). Some message wheels export CMake targets whose include paths
# point at the wheel builder's Python (/opt/python/cpXY-cpXY/...), which does not exist here, so
# CMake refuses to generate. At the end of configure, swap those paths for this venv's Python
# and numpy include directories. System ROS installs never need this file.

find_package(Python3 REQUIRED COMPONENTS Interpreter Development NumPy)

function(robo_reward_fix_wheel_include_dirs)
  get_property(_targets DIRECTORY "${CMAKE_SOURCE_DIR}" PROPERTY IMPORTED_TARGETS)
  foreach(_target IN LISTS _targets)
    get_target_property(_dirs ${_target} INTERFACE_INCLUDE_DIRECTORIES)
    if(NOT _dirs OR NOT _dirs MATCHES "^/opt/python/|;/opt/python/")
      continue()
    endif()
    set(_fixed "")
    foreach(_dir IN LISTS _dirs)
      if(_dir MATCHES "^/opt/python/.*numpy")
        list(APPEND _fixed ${Python3_NumPy_INCLUDE_DIRS})
      elseif(_dir MATCHES "^/opt/python/")
        list(APPEND _fixed ${Python3_INCLUDE_DIRS})
      else()
        list(APPEND _fixed "${_dir}")
      endif()
    endforeach()
    list(REMOVE_DUPLICATES _fixed)
    set_target_properties(${_target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_fixed}")
  endforeach()
endfunction()

cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL robo_reward_fix_wheel_include_dirs)
