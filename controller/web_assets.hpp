// The dashboard's files (controller/web/ and Debian's Chart.js), compiled into the controller at build time
// (controller/CMakeLists.txt generates web_assets.cpp). Immutable data; any thread.
#pragma once

#include <cstddef>
#include <string_view>

namespace jetsweep::controller {

struct WebAsset {
  const char* name;           // as served under /ui/ ("app.js"); index.html is also GET /
  const char* content_type;
  std::string_view data;
};

// The asset named `name`, or null.
const WebAsset* web_asset(std::string_view name);

}  // namespace jetsweep::controller
