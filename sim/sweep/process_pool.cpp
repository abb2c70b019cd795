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

// Child: read an item index, answer [index][size][text], until the parent closes the pipe.
[[noreturn]] void worker_loop(int in_fd, int out_fd, const std::function<std::string(size_t)>& work) {
#if PLACESIM_MIMALLOC
  // A heap of its own: allocating from the parent's heap would write into pages the child shares
  // with the parent, one copy-on-write fault per 4 KiB page (docs/performance.md).
  mi_heap_set_default(mi_heap_new());
#endif
  uint64_t item = 0;
  while (read_all(in_fd, &item, sizeof item)) {
    std::string text;
    try {
      text = work(static_cast<size_t>(item));
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

struct Worker {
  pid_t pid = -1;
  int to_worker = -1;
  int from_worker = -1;
  bool busy = false;
  uint64_t item = 0;
};

void stop(std::vector<Worker>& pool, bool kill_them) {
  for (Worker& w : pool) {
    if (w.to_worker >= 0) ::close(w.to_worker);
    if (w.from_worker >= 0) ::close(w.from_worker);
    w.to_worker = w.from_worker = -1;
    if (w.pid > 0 && kill_them) ::kill(w.pid, SIGKILL);
  }
  for (Worker& w : pool) {
    if (w.pid > 0) ::waitpid(w.pid, nullptr, 0);
    w.pid = -1;
  }
}

}  // namespace

void run_in_processes(const std::vector<size_t>& items, int workers, const std::function<std::string(size_t)>& work,
                      const std::function<void(size_t, const std::string&)>& on_result) {
  if (items.empty()) return;
  size_t count = std::min(static_cast<size_t>(std::max(workers, 1)), items.size());
  std::fflush(nullptr);  // unflushed output would be written again by each child
  std::vector<Worker> pool(count);
  for (size_t w = 0; w < count; ++w) {
    int down[2], up[2];
    if (::pipe(down) != 0 || ::pipe(up) != 0) {
      stop(pool, true);
      throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
    }
    pid_t pid = ::fork();
    if (pid < 0) {
      stop(pool, true);
      throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
    }
    if (pid == 0) {
      ::close(down[1]);
      ::close(up[0]);
      for (size_t other = 0; other < w; ++other) {  // a child keeps only its own pipes
        ::close(pool[other].to_worker);
        ::close(pool[other].from_worker);
      }
      worker_loop(down[0], up[1], work);
    }
    ::close(down[0]);
    ::close(up[1]);
    pool[w] = Worker{pid, down[1], up[0], false, 0};
  }
  // A worker that died leaves its pipe closed; writing to it must fail, not kill us.
  struct sigaction ignore {}, previous {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &previous);
  size_t next = 0;
  size_t done = 0;
  try {
    auto hand_out = [&](Worker& w) {
      if (next >= items.size()) return;
      w.item = items[next++];
      w.busy = true;
      if (!write_all(w.to_worker, &w.item, sizeof w.item)) {
        throw std::runtime_error("a sweep worker died before evaluating configuration " + std::to_string(w.item));
      }
    };
    for (Worker& w : pool) hand_out(w);
    while (done < items.size()) {
      std::vector<pollfd> fds;
      std::vector<size_t> owners;
      for (size_t w = 0; w < pool.size(); ++w) {
        if (pool[w].busy) {
          fds.push_back({pool[w].from_worker, POLLIN, 0});
          owners.push_back(w);
        }
      }
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        throw std::runtime_error(std::string("poll failed: ") + std::strerror(errno));
      }
      for (size_t f = 0; f < fds.size(); ++f) {
        if (fds[f].revents == 0) continue;
        Worker& w = pool[owners[f]];
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
    stop(pool, true);
    throw;
  }
  ::sigaction(SIGPIPE, &previous, nullptr);
  stop(pool, false);
}

}  // namespace placesim
