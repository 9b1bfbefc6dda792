// Texts a test pins byte for byte (an .inc of raw string literals it includes): when the environment variable `env`
// names a file, the texts the code writes now are written there in that form, to be reviewed and committed as the
// new pins (by hand only; a test run never sets it). Test code.
#pragma once

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace jetsweep::testing {

inline void write_pins_if_asked(const char* env, const std::vector<std::string>& texts) {
  const char* path = std::getenv(env);
  if (!path) return;
  FILE* f = std::fopen(path, "w");
  REQUIRE(f);
  for (const auto& text : texts) std::fputs(("    R\"PIN(" + text + ")PIN\",\n").c_str(), f);
  std::fclose(f);
}

}  // namespace jetsweep::testing
