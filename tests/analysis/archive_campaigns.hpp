// The campaigns the archive tests (test_archive.cpp) move between databases, inserted as raw rows into a database the
// controller migrated, in one transaction of the caller's.
#pragma once

#include <pqxx/pqxx>

#include <cstdint>

namespace jetsweep::testing {

// A user's model file, 'hello model' (one chunk; its SHA-256 from Python's hashlib), which alpha's run 2 names.
inline constexpr const char* kModelSha = "2b2eb6f423932d62cafb015658d50a64d33e96e66fc9ec182172df817971e6f4";

// Agents: orin-a (connected, with a credential, runs of alpha), nx-b (alpha), other-c (beta only).
void insert_agents(pqxx::work& w);
// kModelSha's file, and one nobody in alpha names (not archived with it).
void insert_model_files(pqxx::work& w);
// Campaign alpha: three runs (done on orin-a, failed on nx-b, cancelled before it ran) with epochs (summary columns
// filled), minibatch chunks (copy_s NULL and not, NULL elements, 4,096 minibatches, odd floats) and sample chunks
// (NULL power and temperature, ragged per-core values, 2,048 samples x 12 cores: a 200 kB line), an adaptive plan
// with two rounds, and results set aside. Returns its id.
int64_t insert_alpha(pqxx::work& w);
// Campaign beta: one run on other-c with an epoch and one chunk of each kind. Returns its id.
int64_t insert_beta(pqxx::work& w);

}  // namespace jetsweep::testing
