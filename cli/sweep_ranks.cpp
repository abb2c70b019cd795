#include "cli/sweep_ranks.h"

#include <cstdint>
#include <deque>
#include <limits>

namespace placesim {
namespace {

// Rank 0 -> worker: {item, tier}, or {kStop, 0}. Worker -> rank 0: {item, size}, then the text.
constexpr int kWorkTag = 1, kResultHeadTag = 2, kResultTextTag = 3;
constexpr uint64_t kStop = std::numeric_limits<uint64_t>::max();

}  // namespace

void evaluate_over_ranks(real::HostGroup& group, const std::vector<size_t>& items, int tier,
                         const std::function<std::string(size_t)>& work,
                         const std::function<void(size_t, const std::string&)>& on_result) {
  std::deque<size_t> queue(items.begin(), items.end());
  std::vector<bool> busy(size_t(group.size()), false);
  size_t outstanding = 0;
  auto hand_out = [&] {
    for (int rank = 1; rank < group.size() && !queue.empty(); ++rank) {
      if (busy[size_t(rank)]) continue;
      uint64_t message[2] = {queue.front(), uint64_t(tier)};
      queue.pop_front();
      group.send(rank, kWorkTag, message, sizeof message);
      busy[size_t(rank)] = true;
      ++outstanding;
    }
  };
  auto collect = [&](int from) {
    uint64_t head[2] = {0, 0};
    group.receive(from, kResultHeadTag, head, sizeof head);
    std::string text(size_t(head[1]), '\0');
    group.receive(from, kResultTextTag, text.data(), text.size());
    busy[size_t(from)] = false;
    --outstanding;
    on_result(size_t(head[0]), text);
  };
  hand_out();
  while (!queue.empty() || outstanding > 0) {
    if (int from = group.probe_any(kResultHeadTag); from >= 0) {
      collect(from);
      hand_out();
    } else if (!queue.empty()) {
      // Every other rank is busy: rank 0 takes the next item itself rather than wait.
      size_t item = queue.front();
      queue.pop_front();
      on_result(item, work(item));
    } else {
      collect(group.wait_any(kResultHeadTag));
    }
  }
}

void stop_sweep_ranks(real::HostGroup& group) {
  for (int rank = 1; rank < group.size(); ++rank) {
    uint64_t message[2] = {kStop, 0};
    group.send(rank, kWorkTag, message, sizeof message);
  }
}

void serve_sweep_items(real::HostGroup& group, const std::function<std::string(size_t, int)>& work) {
  for (;;) {
    uint64_t message[2] = {0, 0};
    group.receive(0, kWorkTag, message, sizeof message);
    if (message[0] == kStop) return;
    std::string text = work(size_t(message[0]), int(message[1]));
    uint64_t head[2] = {message[0], text.size()};
    group.send(0, kResultHeadTag, head, sizeof head);
    group.send(0, kResultTextTag, text.data(), text.size());
  }
}

}  // namespace placesim
