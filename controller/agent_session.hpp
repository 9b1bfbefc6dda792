// AgentSession: one agent's WebSocket connection on the controller. Owns the socket, the bounded write
// queue, ingest flow control (reading pauses while too many of its results, or too many bytes of every agent's,
// wait for the database: max_ingest_in_flight, the controller's IngestBudget), the ack
// sequence (acks are cumulative: one pending ack, raised as ingests complete, never a queue of them), the
// heartbeat watchdog, and the clock probes it sends (which reply is kept, discarded as taken under load or refused
// is AgentClock's decision; the session logs it and records it in the Store). Io thread only: every method and
// handler runs on the one I/O thread, database completions included (the threading rule: README.md, "Threading";
// checked by io_thread.hpp).
#pragma once

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "common/log.hpp"
#include "common/protocol.hpp"
#include "controller/agent_clock.hpp"
#include "controller/controller.hpp"
#include "net/ws_stream.hpp"

namespace jetsweep::controller {

class AgentSession : public std::enable_shared_from_this<AgentSession> {
 public:
  // `ws`: an accepted plain socket (converts implicitly) or a TLS stream after its handshake (net/ws_stream.hpp).
  AgentSession(net::WsStream&& ws, std::shared_ptr<Controller> controller);
  void run(HttpRequest req);
  void send(proto::Body body);
  void close(const std::string& why);
  // Sends a clock probe, which becomes the one outstanding (the heartbeat sends them; tests call it directly).
  void send_clock_probe();
  // A clock probe ahead of a run, unless one is outstanding: its reply, ahead of the run's run_started, refreshes
  // the offset the run is stored with (runs.clock_offset_s) after a clock step on the board. io thread.
  void probe_clock_before_run();

  int64_t agent_id() const { return agent_id_; }
  const std::string& name() const { return name_; }
  const std::string& device_class() const { return device_class_; }
  bool open() const { return open_; }
  bool registered() const { return agent_id_ != 0; }
  // Flow control as it stands: results waiting for the database (and their bytes), and whether a read is
  // outstanding (false with ingest_in_flight() at max_ingest_in_flight, or while the controller's IngestBudget is
  // spent: reading is paused).
  size_t ingest_in_flight() const { return in_flight_; }
  size_t ingest_bytes_in_flight() const { return in_flight_bytes_; }
  bool reading() const { return reading_; }
  // Reading paused for backpressure (too many of its results, or too many bytes of all agents', wait for the
  // database): its silence is the controller's, not the agent's, so the heartbeat watchdog leaves it be.
  bool paused_for_ingest() const;
  // Paused and queued in the IngestBudget for room (not merely at max_ingest_in_flight).
  bool waiting_for_budget() const { return queued_for_budget_ && !reading_; }
  size_t queued_frames() const { return write_queue_.size() + (writing_ ? 1 : 0); }
  // The ack waiting to be written (the highest committed message id not yet acked), if any.
  std::optional<uint64_t> pending_ack() const { return pending_ack_; }
  // Clock probes discarded because they were taken under load (AgentClock).
  int64_t probes_discarded() const { return clock_.probes_discarded(); }
  std::optional<double> clock_offset_s() const { return clock_.offset_s(); }
  // The offset run `run_id`'s live telemetry is placed with: the one it started under, else the current one.
  std::optional<double> run_clock_offset_s(int64_t run_id) const;
  // Dispatch bookkeeping (owned by the Controller, io thread).
  std::optional<int64_t> current_run;
  bool claiming = false;
  std::optional<int64_t> cancel_sent;   // run we already asked this connection to stop
  std::optional<uint64_t> nothing_at;   // queue generation at which its last claim found nothing
  // Runs whose journaled results the agent replays (Register.journal_runs, less its current run): it is given no
  // new run until each one's run_finished arrived, so results of an earlier attempt never mix with a new one.
  std::set<int64_t> replaying_runs;

 private:
  void read_next();
  void on_frame(std::string frame);
  void on_register(uint64_t id, const proto::Register& reg);
  // The outcome of a registration: the agent id, runs requeued, and the credential issued if it enrolled.
  struct Outcome {
    int64_t agent_id = 0;
    int64_t requeued = 0;
    std::optional<std::string> issued_credential;
  };
  void on_registered(const proto::Register& reg, Result<Outcome> r);
  // `bytes`: the frame's size, held against the controller's IngestBudget until ingest_done.
  void ingest(uint64_t id, proto::Body body, size_t bytes);
  void ingest_done(uint64_t id, const std::string& type, const Status& s, std::optional<int64_t> finished_run,
                   size_t bytes);
  void write_next();
  void ack(uint64_t id);
  void start_heartbeat();
  void reject(const std::string& code, const std::string& message, std::optional<uint64_t> ref);
  void on_time_sync_reply(const proto::TimeSyncReply& m);
  void on_fetch_model(const proto::FetchModel& m);
  void check_io_thread(const char* where);

  net::WsStream ws_;
  std::shared_ptr<Controller> controller_;
  boost::beast::flat_buffer buffer_;
  boost::asio::steady_timer heartbeat_timer_;
  std::chrono::steady_clock::time_point last_rx_;
  std::deque<std::string> write_queue_;
  std::string writing_frame_;              // the frame async_write is writing
  std::optional<uint64_t> pending_ack_;    // written after the queued frames, raised in place
  bool writing_ = false;
  bool open_ = false;
  bool reading_ = false;
  bool registering_ = false;
  bool may_enroll_ = true;   // the upgrade presented the enrollment secret (or none is set)
  size_t in_flight_ = 0;
  size_t in_flight_bytes_ = 0;
  bool queued_for_budget_ = false;   // has a place in the IngestBudget's queue for room to read
  int bad_frames_ = 0;   // rejected frames on this connection, in all
  log::RateLimit rejections_logged_{5, std::chrono::minutes(1)};   // rejections logged: 5 a minute, the rest counted
  int heartbeats_ = 0;
  AgentClock clock_;   // the agent's clocks against ours: probes, the kept estimate, each run's offset
  int64_t agent_id_ = 0;
  std::string name_;
  std::string device_class_;
  std::string peer_;
};

}  // namespace jetsweep::controller
