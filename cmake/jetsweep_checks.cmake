# Configure-time checks shared by the full build and the agent-only profile (JETSWEEP_AGENT_ONLY).
# Everything here works with CMake 3.16 (the oldest the agent-only profile supports: JetPack 5's).

include(CheckCXXSourceCompiles)

# jetsweep_boost_headers(MIN_VERSION)
# Finds the Boost headers (no compiled Boost library) and fails, naming the version found, the version needed
# and the fix, when they are older than MIN_VERSION. Creates header-only Boost::json and Boost::system targets
# so that the same target_link_libraries lines serve both profiles; the one TU that compiles Boost.JSON's
# sources (common/boost_json_src.cpp) is added by common/CMakeLists.txt in this profile.
function(jetsweep_boost_headers min_version)
  # Header-only: FindBoost's own search, which looks in Boost_ROOT / BOOST_ROOT first, instead of a BoostConfig.cmake
  # elsewhere (JetPack's older system Boost would be picked before the headers named by Boost_ROOT).
  set(Boost_NO_BOOST_CMAKE ON)
  # A changed Boost_ROOT / BOOST_ROOT (e.g. after the fix below) must search again, not reuse the cached directory.
  set(roots "${Boost_ROOT}|${BOOST_ROOT}|$ENV{Boost_ROOT}|$ENV{BOOST_ROOT}")
  if(DEFINED JETSWEEP_BOOST_ROOTS_SEEN AND NOT JETSWEEP_BOOST_ROOTS_SEEN STREQUAL roots)
    unset(Boost_INCLUDE_DIR CACHE)
  endif()
  set(JETSWEEP_BOOST_ROOTS_SEEN "${roots}" CACHE INTERNAL "Boost_ROOT/BOOST_ROOT of the last configure")

  set(fix "Fix: run deploy/boost-headers.sh (puts the Boost 1.81.0 headers, SHA-256 checked, in /opt/jetsweep/boost-1.81.0; see docs/DEPLOY.md), then configure again with -DBoost_ROOT=/opt/jetsweep/boost-1.81.0")
  find_package(Boost)
  if(NOT Boost_FOUND)
    unset(Boost_INCLUDE_DIR CACHE)
    message(FATAL_ERROR "jetsweep: no Boost headers found; the agent needs Boost >= ${min_version} (headers only).\n${fix}")
  endif()
  if(Boost_VERSION_STRING VERSION_LESS min_version)
    set(found "${Boost_VERSION_STRING}")
    set(where "${Boost_INCLUDE_DIRS}")
    unset(Boost_INCLUDE_DIR CACHE)   # so that the next configure searches again
    message(FATAL_ERROR "jetsweep: Boost ${found} headers found in ${where} are too old: the agent needs Boost >= "
      "${min_version} (Boost.JSON's std::string_view interface; Asio, Beast and JSON are used header-only, so only "
      "headers are needed).\n${fix}")
  endif()
  foreach(component json system)
    if(NOT TARGET Boost::${component})
      add_library(Boost::${component} INTERFACE IMPORTED)
      set_target_properties(Boost::${component} PROPERTIES INTERFACE_LINK_LIBRARIES Boost::headers)
    endif()
  endforeach()
  message(STATUS "jetsweep: Boost ${Boost_VERSION_STRING} headers in ${Boost_INCLUDE_DIRS}, used header-only")
endfunction()

# jetsweep_torch_abi()
# LibTorch states the libstdc++ ABI it was built with in TORCH_CXX_FLAGS (-D_GLIBCXX_USE_CXX11_ABI=N) and puts it
# only on targets that link torch. Code that shares std::string & co. with Torch-linked code (common, device,
# data, agent_core, the agent and its tests) must use the same setting, so it is applied to every target of the
# directories added after this call. Fails when the setting cannot be applied consistently: Torch names two
# values, the compiler flags name another one, or this compiler and the system's yaml-cpp (built with the
# system's default ABI) cannot build and link a program with it.
function(jetsweep_torch_abi)
  string(REGEX MATCHALL "_GLIBCXX_USE_CXX11_ABI=[0-9]+" torch_abi "${TORCH_CXX_FLAGS}")
  list(REMOVE_DUPLICATES torch_abi)
  list(LENGTH torch_abi n)
  if(n EQUAL 0)
    message(STATUS "jetsweep: LibTorch does not state a libstdc++ ABI (TORCH_CXX_FLAGS '${TORCH_CXX_FLAGS}'); "
      "the compiler's default is used everywhere")
    return()
  endif()
  if(n GREATER 1)
    message(FATAL_ERROR "jetsweep: TORCH_CXX_FLAGS ('${TORCH_CXX_FLAGS}') sets _GLIBCXX_USE_CXX11_ABI to more than one "
      "value; this LibTorch installation is inconsistent")
  endif()
  string(REGEX REPLACE ".*=" "" abi "${torch_abi}")

  string(TOUPPER "${CMAKE_BUILD_TYPE}" config)
  string(REGEX MATCHALL "_GLIBCXX_USE_CXX11_ABI=[0-9]+" user_abi "${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${config}}")
  foreach(flag IN LISTS user_abi)
    if(NOT flag STREQUAL "_GLIBCXX_USE_CXX11_ABI=${abi}")
      message(FATAL_ERROR "jetsweep: LibTorch was built with -D_GLIBCXX_USE_CXX11_ABI=${abi} (TORCH_CXX_FLAGS), but "
        "CMAKE_CXX_FLAGS/CMAKE_CXX_FLAGS_${config} set -D${flag}: code mixing both would pass std::string between "
        "incompatible layouts. Remove that flag.")
    endif()
  endforeach()

  # The setting must take effect (libstdc++ with both ABIs) and the system's C++ libraries must link with it.
  set(CMAKE_REQUIRED_DEFINITIONS "-D_GLIBCXX_USE_CXX11_ABI=${abi}")
  set(CMAKE_REQUIRED_LIBRARIES yaml-cpp)
  set(CMAKE_REQUIRED_QUIET ON)
  check_cxx_source_compiles("
#include <string>
#include <yaml-cpp/yaml.h>
#if !defined(_GLIBCXX_USE_CXX11_ABI) || _GLIBCXX_USE_CXX11_ABI != ${abi}
#error the libstdc++ ABI setting is not in effect
#endif
int main() {
  YAML::Node node = YAML::Load(std::string(\"key: value\"));
  return node[\"key\"].as<std::string>() == \"value\" ? 0 : 1;
}" JETSWEEP_CXX11_ABI_${abi}_USABLE)
  if(NOT JETSWEEP_CXX11_ABI_${abi}_USABLE)
    unset(JETSWEEP_CXX11_ABI_${abi}_USABLE CACHE)   # checked again at the next configure
    message(FATAL_ERROR "jetsweep: LibTorch (${Torch_DIR}) was built with -D_GLIBCXX_USE_CXX11_ABI=${abi}, and every "
      "target that shares types with it must be compiled that way, but a test program with that setting does not "
      "build and link against yaml-cpp here (${CMAKE_CXX_COMPILER} ${CMAKE_CXX_COMPILER_VERSION}; details in "
      "${CMAKE_BINARY_DIR}/CMakeFiles/CMakeError.log). The system's C++ libraries use the other ABI: use a LibTorch "
      "built with the system's ABI (Debian's libtorch-dev uses 1; for a wheel, python3 -c 'import torch; "
      "print(torch.compiled_with_cxx11_abi())' must print True), or build yaml-cpp with "
      "-D_GLIBCXX_USE_CXX11_ABI=${abi} and point CMAKE_PREFIX_PATH at it.")
  endif()
  add_compile_definitions(_GLIBCXX_USE_CXX11_ABI=${abi})
  set(JETSWEEP_CXX11_ABI ${abi} PARENT_SCOPE)
  message(STATUS "jetsweep: _GLIBCXX_USE_CXX11_ABI=${abi} (from LibTorch) applied to every target")
endfunction()

# jetsweep_agent_cxx_standard()
# The one place where the agent's build follows the LibTorch version (issue 30; docs/GPU_CHECK.md). Sets
# JETSWEEP_AGENT_CXX_STANDARD, the C++ standard of the agent, common/, net/, the device layer and their tests:
# C++17 (JetPack 5's GCC 9, issue 11) unless the LibTorch found needs more. LibTorch's headers refuse anything below
# C++20 from 2.14 on (c10: "C++20 or later compatible compiler is required to use PyTorch") and 2.13's already use
# C++20 features (bit-field default initialisers in c10/core/AutogradState.h), so from 2.13 it is 20, which needs
# GCC >= 11 (GCC 10 reports C++20 as 201709L). -DJETSWEEP_AGENT_CXX_STANDARD=20 forces it for any LibTorch.
function(jetsweep_agent_cxx_standard)
  set(std 17)
  if(DEFINED Torch_VERSION AND Torch_VERSION VERSION_GREATER_EQUAL 2.13)
    set(std 20)
  endif()
  if(DEFINED CACHE{JETSWEEP_AGENT_CXX_STANDARD})
    set(std $CACHE{JETSWEEP_AGENT_CXX_STANDARD})
  endif()
  if(NOT std MATCHES "^(17|20|23)$")
    message(FATAL_ERROR "jetsweep: JETSWEEP_AGENT_CXX_STANDARD is '${std}'; expected 17, 20 or 23")
  endif()
  if(std GREATER 17 AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 11)
    message(FATAL_ERROR "jetsweep: LibTorch ${Torch_VERSION} needs C++${std}, which needs GCC >= 11; "
      "${CMAKE_CXX_COMPILER} is GCC ${CMAKE_CXX_COMPILER_VERSION}")
  endif()
  if(NOT std EQUAL 17)
    message(STATUS "jetsweep: the agent, common/, net/ and the device layer build as C++${std} (LibTorch ${Torch_VERSION})")
  endif()
  set(JETSWEEP_AGENT_CXX_STANDARD ${std} PARENT_SCOPE)
endfunction()
