#include "server/work_stream.h"

#include <atomic>
#include <deque>
#include <mutex>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace mtune::server {

// gRPC allows one write in flight per stream: tasks and acknowledgements come
// from several threads (report readers, the commit thread, whoever queued a
// task), so they wait here and each finished write starts the next.
struct WorkStreamState {
  std::mutex mu;
  // Valid until OnDone, which comes only after Finish; every write and the
  // Finish are started by whoever flips `writing` / `finished` under mu.
  WorkReactor* reactor = nullptr;
  std::string worker_id;  // set once the WorkStart is read
  struct Outgoing {
    std::shared_ptr<const mtune::v1::Task> task;  // or, when null, `ack`
    mtune::v1::ReportAck ack;
  };
  std::deque<Outgoing> queue;
  // The write in flight; its task is the coordinator's, lent to the message
  // (a task is ~6 KB of script: not copied) and taken back when it is written.
  mtune::v1::CoordinatorMessage writing_message;
  std::shared_ptr<const mtune::v1::Task> writing_task;
  bool writing = false;
  bool ending = false;     // End(): no more writes, finish as soon as none is in flight
  bool finished = false;   // Finish called (or about to be)
  bool reads_done = false; // the worker closed its side: finish once every ack is out
  int pending_acks = 0;    // reports read, not yet answered
  grpc::Status status;     // for Finish
  std::atomic<bool> disconnected{false};
};

namespace {

// Starts the next write or the Finish that is due, after releasing `lock`.
void Pump(WorkStreamState& st, std::unique_lock<std::mutex> lock) {
  if (st.writing || st.finished) return;
  WorkReactor* reactor = st.reactor;
  if (!st.ending && !st.queue.empty()) {
    WorkStreamState::Outgoing next = std::move(st.queue.front());
    st.queue.pop_front();
    if (next.task != nullptr) {
      st.writing_task = std::move(next.task);
      st.writing_message.unsafe_arena_set_allocated_task(
          const_cast<mtune::v1::Task*>(st.writing_task.get()));
    } else {
      *st.writing_message.mutable_ack() = std::move(next.ack);
    }
    st.writing = true;
    lock.unlock();
    reactor->StartWrite(&st.writing_message);
    return;
  }
  if (st.ending || (st.reads_done && st.pending_acks == 0 && st.queue.empty())) {
    st.finished = true;
    grpc::Status status = st.status;
    lock.unlock();
    reactor->Finish(std::move(status));
  }
}

// The first ending wins; the stream finishes once no write is in flight.
void End(WorkStreamState& st, grpc::Status status) {
  std::unique_lock lock(st.mu);
  if (st.ending || st.finished) return;
  st.ending = true;
  st.status = std::move(status);
  Pump(st, std::move(lock));
}

// No more tasks for this stream's worker; those it holds unreported go back to
// the queue (once; only for a stream that got past its WorkStart).
void Disconnect(WorkStreamState& st, Coordinator* coordinator) {
  if (st.worker_id.empty() || st.disconnected.exchange(true)) return;
  coordinator->WorkerDisconnected(st.worker_id, &st);
}

}  // namespace

WorkReactor::WorkReactor(Coordinator* coordinator, const grpc::Status& denied)
    : coordinator_(coordinator), state_(std::make_shared<WorkStreamState>()) {
  state_->reactor = this;
  if (!denied.ok()) {
    End(*state_, denied);
    return;
  }
  StartRead(&in_);
}

void WorkReactor::OnReadDone(bool ok) {
  if (!ok) {
    if (!started_) {
      End(*state_, grpc::Status(grpc::StatusCode::CANCELLED,
                                "Work stream closed before its WorkStart"));
      return;
    }
    // The worker closed its side (or the stream broke): no more tasks for it;
    // the reports already read are still answered before the stream finishes.
    Disconnect(*state_, coordinator_);
    std::unique_lock lock(state_->mu);
    state_->reads_done = true;
    Pump(*state_, std::move(lock));
    return;
  }
  if (!started_)
    HandleStart();
  else
    HandleReport();
}

void WorkReactor::HandleStart() {
  if (!in_.has_start()) {
    End(*state_, grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                              "the first message of a Work stream must be a WorkStart"));
    return;
  }
  const std::string worker_id = in_.start().worker_id();
  std::shared_ptr<WorkStreamState> st = state_;
  Coordinator* coordinator = coordinator_;
  auto sink = [st, coordinator](std::shared_ptr<const mtune::v1::Task> task) {
    if (task == nullptr) {  // the coordinator stops, or the worker registered again
      const bool known = coordinator->KnowsWorker(st->worker_id);
      Disconnect(*st, coordinator);
      End(*st, known ? grpc::Status(grpc::StatusCode::UNAVAILABLE, "coordinator shutting down")
                     : grpc::Status(grpc::StatusCode::NOT_FOUND,
                                    absl::StrCat("worker '", st->worker_id, "' was replaced")));
      return;
    }
    std::unique_lock lock(st->mu);
    // A stream that is ending drops it: its Disconnect re-queues what it holds.
    if (st->ending || st->finished) return;
    st->queue.push_back({std::move(task), {}});
    Pump(*st, std::move(lock));
  };
  // Written before the sink can run (it may run inside StartPushing).
  state_->worker_id = worker_id;
  absl::Status pushing = coordinator_->StartPushing(worker_id, in_.start().window(), sink,
                                                           state_.get());
  if (!pushing.ok()) {
    End(*state_, grpc::Status(static_cast<grpc::StatusCode>(pushing.code()),
                              std::string(pushing.message())));
    return;
  }
  started_ = true;
  StartRead(&in_);
}

void WorkReactor::HandleReport() {
  if (!in_.has_report()) {
    Disconnect(*state_, coordinator_);
    End(*state_, grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                              "after its WorkStart a Work stream carries only TaskReports"));
    return;
  }
  const int64_t task_id = in_.report().task_id();
  {
    std::lock_guard lock(state_->mu);
    ++state_->pending_acks;
  }
  std::shared_ptr<WorkStreamState> st = state_;
  // Frees the worker's place and sends its next task from this thread; the
  // acknowledgement comes from the commit thread after COMMIT: once the worker
  // reads stored = true, the result is durable.
  coordinator_->ReportResultAsync(
      state_->worker_id, task_id, std::move(*in_.mutable_report()->mutable_result()),
      [st, task_id](absl::Status stored) {
        std::unique_lock lock(st->mu);
        --st->pending_acks;
        if (!st->ending && !st->finished) {
          WorkStreamState::Outgoing out;
          out.ack.set_task_id(task_id);
          out.ack.set_stored(stored.ok());
          if (!stored.ok()) out.ack.set_error(stored.ToString());
          st->queue.push_back(std::move(out));
        }
        Pump(*st, std::move(lock));
      });
  StartRead(&in_);
}

void WorkReactor::OnWriteDone(bool ok) {
  WorkStreamState& st = *state_;
  std::unique_lock lock(st.mu);
  if (st.writing_message.has_task()) st.writing_message.unsafe_arena_release_task();
  st.writing_task.reset();
  st.writing = false;
  if (!ok && !st.ending) {  // the worker went away: its reads end too
    st.ending = true;
    st.status = grpc::Status(grpc::StatusCode::CANCELLED, "the Work stream broke");
  }
  if (!ok) {
    lock.unlock();
    Disconnect(st, coordinator_);
    lock.lock();
  }
  Pump(st, std::move(lock));
}

void WorkReactor::OnCancel() {
  Disconnect(*state_, coordinator_);
  End(*state_, grpc::Status(grpc::StatusCode::CANCELLED, "Work stream cancelled"));
}

void WorkReactor::OnDone() {
  {
    std::lock_guard lock(state_->mu);
    state_->reactor = nullptr;
  }
  Disconnect(*state_, coordinator_);  // a stream that ended any other way
  delete this;
}

}  // namespace mtune::server
