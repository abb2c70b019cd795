#include "real_backend/runtime/worker_thread.h"

#include <future>

#include "real_backend/runtime/cpu_kernels.h"

namespace placesim::real {

WorkerThread::WorkerThread(std::optional<unsigned> cpu) : thread_([this, cpu] { loop(cpu); }) {}

WorkerThread::~WorkerThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void WorkerThread::submit(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
}

void WorkerThread::run_and_wait(const std::function<void()>& job) {
  std::promise<void> finished;
  submit([&] {
    try {
      job();
      finished.set_value();
    } catch (...) {
      finished.set_exception(std::current_exception());
    }
  });
  finished.get_future().get();
}

void WorkerThread::loop(std::optional<unsigned> cpu) {
  if (cpu) pin_current_thread(*cpu);
  use_single_threaded_blas();
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

}  // namespace placesim::real
