// Forced into every translation unit (-include) by scripts/agent-only-build, never by a real build.
// JetPack 5's GCC 9 (and GCC 10) has no floating-point std::from_chars / std::to_chars; the g++-11 that CI builds
// the agent with has them, so a call would pass CI and break on a board. These overloads make such a call ambiguous
// here, so CI fails as GCC 9 would. Use jetsweep::device::from_chars_double (agent/device/fs_util.hpp) instead.
#pragma once

#include <charconv>

// As GCC 9 and 10: no floating-point charconv (code may test either macro).
#undef __cpp_lib_to_chars
#define JETSWEEP_NO_FLOATING_POINT_CHARCONV 1

namespace std {
struct jetsweep_gcc9_has_no_floating_point_charconv {};
#define JETSWEEP_GCC9_CHARCONV_GUARD(T)                                                             \
  from_chars_result from_chars(const char*, const char*, T&,                                       \
                               jetsweep_gcc9_has_no_floating_point_charconv = {}) noexcept;        \
  to_chars_result to_chars(char*, char*, T, jetsweep_gcc9_has_no_floating_point_charconv = {}) noexcept;
JETSWEEP_GCC9_CHARCONV_GUARD(float)
JETSWEEP_GCC9_CHARCONV_GUARD(double)
JETSWEEP_GCC9_CHARCONV_GUARD(long double)
#undef JETSWEEP_GCC9_CHARCONV_GUARD
}  // namespace std
