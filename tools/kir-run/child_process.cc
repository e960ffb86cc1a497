#include "tools/kir-run/child_process.h"

#include <signal.h>
#include <sys/wait.h>

#include <thread>

namespace kir {

ChildWait WaitForChild(pid_t pid, double timeout_seconds,
                       std::chrono::steady_clock::time_point start) {
  ChildWait result;
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  while (true) {
    const pid_t done = waitpid(pid, &result.status, WNOHANG);
    if (done == pid) break;
    if (elapsed() > timeout_seconds) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      waitpid(pid, &result.status, 0);
      result.hung = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  result.seconds = elapsed();
  return result;
}

}  // namespace kir
