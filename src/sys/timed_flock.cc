#include "sys/timed_flock.h"

#include <signal.h>
#include <sys/file.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>

namespace gpupin {
namespace {

using Clock = std::chrono::steady_clock;

// The re-arm interval: an alarm that fires between our deadline check and
// the next flock() is lost, and the next one ends the wait instead.
constexpr std::chrono::milliseconds kRearm{20};

void InterruptOnly(int) {}

timeval ToTimeval(std::chrono::microseconds duration) {
  return {static_cast<time_t>(duration.count() / 1'000'000),
          static_cast<suseconds_t>(duration.count() % 1'000'000)};
}

// Arms SIGALRM without SA_RESTART for as long as it lives, so that a
// blocked flock returns EINTR; puts back whatever was there before. The
// signal is unblocked meanwhile: a mask inherited from whoever started
// gpupin must not turn a hostile lock into a hang.
class Alarm {
 public:
  explicit Alarm(std::chrono::milliseconds first) {
    sigset_t alarm_only;
    sigemptyset(&alarm_only);
    sigaddset(&alarm_only, SIGALRM);
    struct sigaction action = {};
    action.sa_handler = InterruptOnly;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGALRM, &action, &previous_action_) != 0) return;
    sigprocmask(SIG_UNBLOCK, &alarm_only, &previous_mask_);
    itimerval timer{ToTimeval(kRearm), ToTimeval(std::max(first, std::chrono::milliseconds(1)))};
    armed_ = setitimer(ITIMER_REAL, &timer, &previous_timer_) == 0;
    if (!armed_) Restore();
  }
  ~Alarm() {
    if (!armed_) return;
    setitimer(ITIMER_REAL, &previous_timer_, nullptr);
    Restore();
  }
  Alarm(const Alarm&) = delete;
  Alarm& operator=(const Alarm&) = delete;

  bool armed() const { return armed_; }

 private:
  // Our alarms are all delivered by now: the timer is off and the signal
  // was unblocked while it ran.
  void Restore() {
    sigaction(SIGALRM, &previous_action_, nullptr);
    sigprocmask(SIG_SETMASK, &previous_mask_, nullptr);
  }

  bool armed_ = false;
  struct sigaction previous_action_ = {};
  sigset_t previous_mask_ = {};
  itimerval previous_timer_ = {};
};

}  // namespace

FlockOutcome LockExclusiveWithin(int fd, std::chrono::milliseconds timeout) {
  // Uncontended, the usual case: no timer to set up.
  if (flock(fd, LOCK_EX | LOCK_NB) == 0) return FlockOutcome::kLocked;
  if (errno != EWOULDBLOCK && errno != EINTR) return FlockOutcome::kFailed;
  const Clock::time_point deadline = Clock::now() + timeout;
  Alarm alarm(timeout);
  if (!alarm.armed()) return FlockOutcome::kFailed;
  while (flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) return FlockOutcome::kFailed;
    if (Clock::now() >= deadline) return FlockOutcome::kTimedOut;
  }
  return FlockOutcome::kLocked;
}

}  // namespace gpupin
