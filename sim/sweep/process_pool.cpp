#include "sim/sweep/process_pool.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "sim/core/fd_io.h"

#if PLACESIM_MIMALLOC
#include <mimalloc.h>
#endif

namespace placesim {
namespace {

// Child: read [item][tag], answer [item][size][text], until the parent closes the pipe.
[[noreturn]] void worker_loop(int in_fd, int out_fd, const ProcessPool::Work& work) {
#if PLACESIM_MIMALLOC
  // A heap of its own: allocating from the parent's heap would write into pages the child shares
  // with the parent, one copy-on-write fault per 4 KiB page (docs/performance.md).
  mi_heap_set_default(mi_heap_new());
#endif
  uint64_t message[2] = {0, 0};
  while (read_all(in_fd, message, sizeof message)) {
    const uint64_t item = message[0];
    std::string text;
    try {
      text = work(static_cast<size_t>(item), static_cast<int>(static_cast<int64_t>(message[1])));
    } catch (...) {
      _exit(4);
    }
    uint64_t size = text.size();
    if (!write_all(out_fd, &item, sizeof item) || !write_all(out_fd, &size, sizeof size) ||
        !write_all(out_fd, text.data(), text.size())) {
      _exit(3);
    }
  }
  _exit(0);
}

}  // namespace

ProcessPool::ProcessPool(int workers, Work work) : size_(static_cast<size_t>(std::max(workers, 1))), work_(std::move(work)) {}

ProcessPool::~ProcessPool() { stop_workers(false); }

void ProcessPool::stop_workers(bool kill_them) {
  for (Worker& w : workers_) {
    if (w.to_worker >= 0) ::close(w.to_worker);
    if (w.from_worker >= 0) ::close(w.from_worker);
    w.to_worker = w.from_worker = -1;
    if (w.pid > 0 && kill_them) ::kill(w.pid, SIGKILL);
  }
  for (Worker& w : workers_) {
    if (w.pid > 0) ::waitpid(w.pid, nullptr, 0);
    w.pid = -1;
  }
  workers_.clear();
}

void ProcessPool::fork_workers(size_t count) {
  std::fflush(nullptr);  // unflushed output would be written again by each child
  while (workers_.size() < count) {
    int down[2], up[2];
    if (::pipe(down) != 0) throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
    if (::pipe(up) != 0) {
      const int error = errno;
      ::close(down[0]);
      ::close(down[1]);
      throw std::runtime_error(std::string("pipe failed: ") + std::strerror(error));
    }
    pid_t pid = ::fork();
    if (pid < 0) {
      const int error = errno;
      for (int fd : {down[0], down[1], up[0], up[1]}) ::close(fd);
      throw std::runtime_error(std::string("fork failed: ") + std::strerror(error));
    }
    if (pid == 0) {
      ::close(down[1]);
      ::close(up[0]);
      for (const Worker& other : workers_) {  // a child keeps only its own pipes
        ::close(other.to_worker);
        ::close(other.from_worker);
      }
      worker_loop(down[0], up[1], work_);
    }
    ::close(down[0]);
    ::close(up[1]);
    workers_.push_back(Worker{pid, down[1], up[0], false, 0});
  }
}

void ProcessPool::run(const std::vector<size_t>& items, int tag, const OnResult& on_result) {
  if (items.empty()) return;
  // A worker that died leaves its pipe closed; writing to it must fail, not kill us.
  struct sigaction ignore {}, previous {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &previous);
  size_t next = 0;
  size_t done = 0;
  try {
    fork_workers(std::min(size_, items.size()));
    auto hand_out = [&](Worker& w) {
      if (next >= items.size()) return;
      w.item = items[next++];
      w.busy = true;
      const uint64_t message[2] = {w.item, static_cast<uint64_t>(static_cast<int64_t>(tag))};
      if (!write_all(w.to_worker, message, sizeof message)) {
        throw std::runtime_error("a sweep worker died before evaluating configuration " + std::to_string(w.item));
      }
    };
    for (Worker& w : workers_) hand_out(w);
    while (done < items.size()) {
      std::vector<pollfd> fds;
      std::vector<size_t> owners;
      for (size_t w = 0; w < workers_.size(); ++w) {
        if (workers_[w].busy) {
          fds.push_back({workers_[w].from_worker, POLLIN, 0});
          owners.push_back(w);
        }
      }
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        throw std::runtime_error(std::string("poll failed: ") + std::strerror(errno));
      }
      for (size_t f = 0; f < fds.size(); ++f) {
        if (fds[f].revents == 0) continue;
        Worker& w = workers_[owners[f]];
        uint64_t item = 0, size = 0;
        std::string text;
        bool ok = read_all(w.from_worker, &item, sizeof item) && read_all(w.from_worker, &size, sizeof size);
        if (ok) {
          text.resize(size);
          ok = read_all(w.from_worker, text.data(), size);
        }
        if (!ok || item != w.item) {
          throw std::runtime_error("a sweep worker died while evaluating configuration " + std::to_string(w.item));
        }
        w.busy = false;
        ++done;
        on_result(static_cast<size_t>(item), text);
        hand_out(w);
      }
    }
  } catch (...) {
    ::sigaction(SIGPIPE, &previous, nullptr);
    stop_workers(true);  // results still in flight would answer the next batch: the next forks anew
    throw;
  }
  ::sigaction(SIGPIPE, &previous, nullptr);
}

void run_in_processes(const std::vector<size_t>& items, int workers, const std::function<std::string(size_t)>& work,
                      const std::function<void(size_t, const std::string&)>& on_result) {
  ProcessPool pool(workers, [&work](size_t item, int) { return work(item); });
  pool.run(items, 0, on_result);
}

}  // namespace placesim
