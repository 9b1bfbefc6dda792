// Boost.JSON's compiled part, for the agent-only profile (JETSWEEP_AGENT_ONLY), which uses Boost header-only
// (a board has Boost headers, not Boost's libraries). Exactly one TU may include this; the full build links
// libboost_json instead and does not compile this file.
#include <boost/json/src.hpp>
