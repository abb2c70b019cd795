// A thread that runs the jobs handed to it, one at a time, in order: a plan device's compute
// stream, or a copy channel. Optionally pinned to one CPU. Thread-safe: submit() may be called
// from any thread; the destructor finishes queued jobs and joins.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

namespace placesim::real {

class WorkerThread {
 public:
  /// `cpu`: the index among this process's usable CPUs to pin to; nullopt = not pinned.
  explicit WorkerThread(std::optional<unsigned> cpu);
  ~WorkerThread();
  WorkerThread(const WorkerThread&) = delete;
  WorkerThread& operator=(const WorkerThread&) = delete;

  void submit(std::function<void()> job);
  /// Runs `job` on the worker and waits for it (allocation and first touch on the worker).
  void run_and_wait(const std::function<void()>& job);

 private:
  void loop(std::optional<unsigned> cpu);
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace placesim::real
