// Agent: owns the connection to the controller (Boost.Beast WebSocket client), the explicit state machine
// Disconnected -> Connecting -> Registering -> Idle <-> Running -> Draining -> Stopped (and Running ->
// Rebooting when a run's nvpmodel mode needs the board rebooted: agent/reboot.hpp; the agent that comes back
// resumes the run from the pending-reboot file), the outbox of
// result messages kept until the controller acks them (agent/outbox.hpp: journaled first when there is a journal,
// replayed from it after a restart, resent after every reconnect, in bounded memory and a bounded send window;
// control messages are written ahead of results), clock-sync replies, heartbeats, and the
// training thread, and the board-restore policy (restore after `idle_restore` without a run, and in
// release_board() at shutdown). All members are touched only on the io_context's single thread; the
// training thread talks to it through asio::post.
#pragma once

#include <atomic>
#include <boost/asio.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>

#include "agent/host_facts.hpp"
#include "agent/journal.hpp"
#include "agent/model_fetch.hpp"
#include "agent/outbox.hpp"
#include "agent/reboot.hpp"
#include "agent/run_executor.hpp"
#include "common/protocol.hpp"

namespace boost::asio::ssl {
class context;
}

namespace jetsweep::agent {

enum class AgentState { kDisconnected, kConnecting, kRegistering, kIdle, kRunning, kRebooting, kDraining, kStopped };
const char* state_name(AgentState s);

struct AgentOptions {
  std::string host = "127.0.0.1";
  std::string port = "8420";
  std::string target = "/agent";
  std::string name;
  std::string root = "/";           // procfs/sysfs root for telemetry
  proto::DeviceFacts facts;
  std::chrono::milliseconds backoff_initial{200};
  std::chrono::milliseconds backoff_max{10000};
  std::chrono::milliseconds drain_timeout{10000};   // how long shutdown waits for acks
  // Restore the board (power settings) after this long without an assigned run; 0 = never.
  std::chrono::milliseconds idle_restore{600000};
  // The backend that executes runs; null = the host backend on `root`.
  std::shared_ptr<RunExecutor> executor;
  // On-disk journal of result messages (opened by the caller); null = keep them in memory only.
  std::shared_ptr<Journal> journal;
  // The outbox's bounds: frames in memory, journal disk use at which runs pause, the send window.
  Outbox::Limits outbox;
  // Sent as "Authorization: Bearer <secret>" in the WebSocket upgrade request when not empty.
  std::string enroll_secret;
  // wss://: the client TLS context (net/tls.hpp) that verifies the controller; null = ws://. ca_file names the
  // trust in log lines (empty: the system's default CA paths).
  std::shared_ptr<boost::asio::ssl::context> tls;
  std::string ca_file;
  // The credential this agent enrolled with (agent/credential_file.hpp), presented in every registration; a
  // credential the controller issues is written to credential_file (empty: kept in memory only).
  std::optional<std::string> credential;
  std::string credential_file;
  // Rebooting the board for a run whose nvpmodel mode gates the GPU differently (off unless reboot.allowed), and
  // the run this agent rebooted for before it started (loaded by the caller from reboot.pending_file): it is
  // resumed after registration once its masks are verified, or failed naming them.
  RebootOptions reboot;
  std::optional<PendingReboot> resume_after_reboot;
};

class Agent : public std::enable_shared_from_this<Agent> {
 public:
  Agent(boost::asio::io_context& ioc, AgentOptions options);
  ~Agent();
  void start();
  // Cancels a running run, waits (bounded) for outstanding results to be acked, closes and stops.
  void shutdown();
  AgentState state() const { return state_; }
  // Io thread: runs `job` on the journal's thread in order with the outbox's writes and reads (tests: a disk that
  // stalls); false without a journal.
  bool run_on_journal_thread(std::function<void(Journal&)> job) { return outbox_.run_on_journal_thread(std::move(job)); }
  // After the agent stopped: waits for the training thread, then restores the board if a run changed
  // it. Call on the io thread (or after the io_context stopped).
  Status release_board();

 private:
  struct Connection;
  class PostingSink;

  void set_state(AgentState s);
  void connect();
  void tls_handshake(std::shared_ptr<Connection> c);
  void ws_handshake(std::shared_ptr<Connection> c);
  void on_connected(std::shared_ptr<Connection> c);
  void read_next(std::shared_ptr<Connection> c);
  // An instant on the wall clock and on the boot clock: when a frame was read (TimeSyncReply.t1 and t1_boot), when a
  // run started (RunStarted::t0_unix_s and t0_boot_s).
  struct Instant {
    double unix_s = 0;
    double boot_s = 0;
  };
  void on_frame(std::shared_ptr<Connection> c, const std::string& frame, Instant rx);
  void handle(std::shared_ptr<Connection> c, const proto::Envelope& env, Instant rx);
  void drop_connection(const std::string& why);
  void schedule_reconnect();
  void send_now(proto::Body body);                 // control messages: not kept across reconnects, sent first
  // Data messages: journaled, kept until acked. `from_producer`: posted by the training thread (ProducerGate).
  void enqueue_result(proto::Body body, bool from_producer = false);
  void write_next();                               // the next control frame, else the outbox's next result
  bool sending_results() const;                    // registered on an open connection
  void start_heartbeat();
  void start_run(const proto::AssignRun& assign);
  void on_run_finished(int64_t run_id);
  // The reboot flow (io thread): announce (journaled, acked), then nvpmodel and the reboot command once the
  // controller has it, then wait to be taken down; any failure fails the run, naming the step.
  void on_reboot_needed(const proto::AssignRun& assign, proto::RebootPending need);
  void run_reboot_commands();
  void on_reboot_commands_done(const Result<bool>& back);
  void on_reboot_verified(int64_t run_id);
  // Ends the run (status "failed", or "cancelled" when the controller cancelled it) and forgets the reboot.
  void fail_reboot(int64_t run_id, const std::string& why, const char* status = "failed");
  void maybe_finish_drain();
  void stop_now();
  void schedule_idle_restore();
  void keep_credential(const std::string& credential);   // issued in `registered`: kept in memory and on disk

  boost::asio::io_context& ioc_;
  AgentOptions options_;
  AgentState state_ = AgentState::kDisconnected;
  std::shared_ptr<Connection> conn_;
  boost::asio::steady_timer reconnect_timer_;
  boost::asio::steady_timer heartbeat_timer_;
  boost::asio::steady_timer drain_timer_;
  boost::asio::steady_timer idle_timer_;
  boost::asio::steady_timer reboot_timer_;   // the reboot that should have taken the agent down by now
  std::chrono::milliseconds backoff_;
  std::mt19937_64 rng_;
  std::string boot_id_ = read_boot_id(options_.root);   // the boot the boot clock counts from; "" when unknown
  // A reading of the boot clock, or none when the boot it counts from is unknown (RunStarted, TimeSyncReply).
  std::optional<double> boot_stamp(double boot_s) const { return boot_id_.empty() ? std::nullopt : std::optional(boot_s); }
  std::chrono::milliseconds heartbeat_interval_{1000};
  std::chrono::steady_clock::time_point last_rx_;
  int64_t agent_id_ = 0;
  std::optional<std::string> credential_;   // presented in Register; set from options, replaced when issued

  Outbox outbox_;                           // result messages not yet committed by the controller
  std::deque<std::string> control_queue_;   // control frames queued on the current connection
  Outbox::Frame writing_frame_;             // the frame async_write is writing
  bool writing_ = false;
  bool shutting_down_ = false;

  std::shared_ptr<RunExecutor> executor_;
  std::shared_ptr<ControllerModelFetcher> model_fetcher_;   // model files the runs need, from the controller
  std::thread training_thread_;
  std::optional<int64_t> current_run_;
  std::atomic<bool> cancel_{false};
  std::optional<PendingReboot> pending_reboot_;   // announced or being resumed (also on disk)
  bool resume_pending_ = false;                   // pending_reboot_ came from before the reboot: run it once registered
  bool awaiting_reboot_ = false;                  // announced: waiting for the ack, the commands, then the end
  uint64_t reboot_announce_id_ = 0;               // the reboot_pending message whose ack starts the reboot
  bool reboot_commands_started_ = false;
};

}  // namespace jetsweep::agent
