// Internal to the coordinator's source files (not a public header): the lock every
// Coordinator method that touches shared state takes, and the wall clock that
// stored times and lease deadlines use.
#pragma once

#include <mutex>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "server/coordinator.h"

namespace mtune::server {

inline double UnixNow() { return absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()); }

class Coordinator::Locked {
 public:
  explicit Locked(Coordinator& c) : c_(c), lock_(c.mu_) {}
  ~Locked() {
    if (lock_.owns_lock()) Unlock();
  }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;
  void Unlock() {
    std::vector<std::pair<TaskSink, std::shared_ptr<const mtune::v1::Task>>> deliveries;
    deliveries.swap(c_.deliveries_);
    lock_.unlock();
    for (auto& [sink, task] : deliveries) sink(std::move(task));
  }
  // For condition variables.
  std::unique_lock<std::mutex>& lock() { return lock_; }

 private:
  Coordinator& c_;
  std::unique_lock<std::mutex> lock_;
};

}  // namespace mtune::server
