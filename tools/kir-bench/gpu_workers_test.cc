#include "tools/kir-bench/gpu_workers.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/kir-bench/problem_loop.h"

namespace kir::bench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Problems named p0, p1, ...: what the queue hands out (no GPU, no CSV).
std::vector<ProblemResult> Identities(int count) {
  std::vector<ProblemResult> identities(count);
  for (int i = 0; i < count; ++i) {
    identities[i].name = absl::StrCat("p", i);
    identities[i].key = absl::StrCat("key", i);
    identities[i].line = i + 2;
  }
  return identities;
}

std::vector<size_t> AllOf(const std::vector<ProblemResult>& identities) {
  std::vector<size_t> order;
  for (size_t i = 0; i < identities.size(); ++i) order.push_back(i);
  return order;
}

// A stand-in for a problem's GPU work: sleeps, then passes, saying which
// process ran it and which device the worker was pinned to.
ProblemResult FakeWork(const ProblemResult& identity, double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  ProblemResult result = identity;
  result.status = "passed";
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  result.device = absl::StrCat("fake device ", visible ? visible : "none");
  result.log = absl::StrCat(getpid());
  return result;
}

// Whether `pid` is gone within two seconds: dead, or a zombie left for
// whoever adopted it to reap. Kills it if not.
bool GoneSoon(pid_t pid) {
  for (int i = 0; i < 400; ++i) {
    std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
    std::string pid_text, name, state;
    if (!(stat >> pid_text >> name >> state) || state == "Z") return true;
    usleep(5000);
  }
  kill(pid, SIGKILL);
  return false;
}

std::vector<WorkerDevice> Devices(std::vector<std::string> visible) {
  std::vector<WorkerDevice> devices;
  for (const std::string& v : visible) devices.push_back({v, v});
  return devices;
}

TEST(GpuWorkers, ParsesAllACountAndAList) {
  EXPECT_THAT(*ParseGpus("all", 3), ElementsAre(0, 1, 2));
  EXPECT_THAT(*ParseGpus("2", 3), ElementsAre(0, 1));
  EXPECT_THAT(*ParseGpus("0,2", 3), ElementsAre(0, 2));
  // A repeated index: two workers share GPU 0.
  EXPECT_THAT(*ParseGpus("0,0", 1), ElementsAre(0, 0));
  EXPECT_THAT(ParseGpus("4", 3).status().message(),
              HasSubstr("--gpus=4: this host has 3 GPU(s)"));
  EXPECT_THAT(ParseGpus("0,3", 3).status().message(),
              HasSubstr("no GPU 3 (this host has 3, numbered from 0)"));
  EXPECT_THAT(ParseGpus("0", 3).status().message(), HasSubstr("a count >= 1"));
  for (const char* bad : {"x", "1,", "-1,2", "1;2", ""})
    EXPECT_THAT(ParseGpus(bad, 3).status().message(),
                HasSubstr("--gpus takes all, a count, or a list"))
        << bad;
  EXPECT_FALSE(ParseGpus("all", 0).ok());
}

TEST(GpuWorkers, PinsThroughAnInheritedVisibleDeviceList) {
  EXPECT_EQ(PinnedDevice(1, ""), "1");
  // With CUDA_VISIBLE_DEVICES=4,6 set, this process's GPU 1 is GPU 6.
  EXPECT_EQ(PinnedDevice(1, "4,6"), "6");
  EXPECT_EQ(PinnedDevice(0, "GPU-1234, 6"), "GPU-1234");
}

TEST(GpuWorkers, EveryProblemRunsOnceInOrderOfTheInput) {
  const std::vector<ProblemResult> identities = Identities(7);
  std::ostringstream progress_text;
  Progress progress(progress_text, 7, /*terminal=*/false);
  std::vector<size_t> finished;
  const std::vector<ProblemResult> results = RunOnWorkers(
      identities, AllOf(identities), Devices({"0", "1"}),
      [&](size_t i) { return FakeWork(identities[i], 0.01 * (i % 3)); },
      [&](size_t i, const ProblemResult&) { finished.push_back(i); },
      &progress);
  ASSERT_EQ(results.size(), 7u);
  EXPECT_EQ(finished.size(), 7u);
  EXPECT_EQ(std::set<size_t>(finished.begin(), finished.end()).size(), 7u);
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i].name, identities[i].name);
    EXPECT_EQ(results[i].status, "passed");
    // The row names the GPU, and the worker was pinned to that GPU.
    EXPECT_TRUE(results[i].gpu == "0" || results[i].gpu == "1");
    EXPECT_EQ(results[i].device, absl::StrCat("fake device ", results[i].gpu));
    // It ran in a worker, not here.
    EXPECT_NE(results[i].log, absl::StrCat(getpid()));
  }
  // One progress count for the whole run.
  EXPECT_THAT(progress_text.str(), HasSubstr("kir-bench: [7/7] passed"));
}

TEST(GpuWorkers, OnlyTheProblemsNotFinishedEarlierRun) {
  std::vector<ProblemResult> identities = Identities(4);
  identities[1].status = "passed";  // e.g. read back by --resume
  identities[1].gpu = "earlier";
  const std::vector<ProblemResult> results = RunOnWorkers(
      identities, {0, 2, 3}, Devices({"0"}),
      [&](size_t i) {
        if (i == 1) std::abort();  // must not run
        return FakeWork(identities[i], 0);
      },
      nullptr, nullptr);
  EXPECT_EQ(results[1].gpu, "earlier");
  for (size_t i : {0, 2, 3}) EXPECT_EQ(results[i].status, "passed");
}

TEST(GpuWorkers, DynamicAssignmentBalancesUnevenProblems) {
  // One long problem first, then eight short ones. Handed out one at a
  // time, the second worker takes every short problem while the first
  // runs the long one; a static half-and-half split would put the long
  // one and three short ones on one worker.
  const std::vector<ProblemResult> identities = Identities(9);
  const auto start = std::chrono::steady_clock::now();
  const std::vector<ProblemResult> results = RunOnWorkers(
      identities, AllOf(identities), Devices({"0", "1"}),
      [&](size_t i) { return FakeWork(identities[i], i == 0 ? 2.0 : 0.1); },
      nullptr, nullptr);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  const std::string long_gpu = results[0].gpu;
  for (size_t i = 1; i < results.size(); ++i) {
    EXPECT_EQ(results[i].status, "passed");
    EXPECT_NE(results[i].gpu, long_gpu) << "p" << i;
  }
  EXPECT_LT(seconds, 2.0 + 0.8);  // the long problem, not long + 0.3 + more
}

TEST(GpuWorkers, SeveralWorkersShareOneDevice) {
  const std::vector<ProblemResult> identities = Identities(6);
  const std::vector<ProblemResult> results = RunOnWorkers(
      identities, AllOf(identities), Devices({"0", "0", "0"}),
      [&](size_t i) { return FakeWork(identities[i], 0.2); }, nullptr, nullptr);
  std::set<std::string> processes;
  for (const ProblemResult& result : results) {
    EXPECT_EQ(result.status, "passed");
    EXPECT_EQ(result.gpu, "0");
    EXPECT_EQ(result.device, "fake device 0");
    processes.insert(result.log);
  }
  EXPECT_EQ(processes.size(), 3u);  // three workers took part
}

TEST(GpuWorkers, AWorkerKilledMidProblemLosesOnlyThatProblem) {
  // The problem runs in a child of the worker, as kir-bench runs it; that
  // child kills its worker, then waits forever: it must die with it.
  const std::vector<ProblemResult> identities = Identities(6);
  const std::string pid_file =
      absl::StrCat(::testing::TempDir(), "/orphan_pid_", getpid());
  std::ostringstream progress_text;
  Progress progress(progress_text, 6, /*terminal=*/false);
  const auto start = std::chrono::steady_clock::now();
  const std::vector<ProblemResult> results = RunOnWorkers(
      identities, AllOf(identities), Devices({"0", "1"}),
      [&](size_t i) {
        return RunInChild(
            [&] {
              if (i == 2) {
                std::ofstream(pid_file) << getpid();
                kill(getppid(), SIGKILL);
                while (true) pause();
              }
              return FakeWork(identities[i], 0.1);
            },
            /*timeout_seconds=*/60, identities[i]);
      },
      nullptr, &progress);
  // Not the 60 s watchdog: the worker's death is noticed at once.
  EXPECT_LT(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count(),
      30);
  for (size_t i = 0; i < results.size(); ++i) {
    if (i == 2) continue;
    EXPECT_EQ(results[i].status, "passed") << i;
  }
  EXPECT_EQ(results[2].status, "lost");
  EXPECT_EQ(results[2].name, "p2");
  EXPECT_EQ(results[2].line, 4);
  EXPECT_THAT(results[2].message,
              HasSubstr("died (signal 9, Killed) while running it"));
  EXPECT_THAT(progress_text.str(), HasSubstr("lost     p2: the worker"));
  // The problem's own process did not outlive its worker.
  std::ifstream in(pid_file);
  pid_t orphan = 0;
  ASSERT_TRUE(in >> orphan);
  std::remove(pid_file.c_str());
  EXPECT_TRUE(GoneSoon(orphan))
      << "process " << orphan << " outlived its worker";
}

TEST(GpuWorkers, ADeviceWhoseWorkersKeepDyingIsRetired) {
  // Every worker on device 1 dies at its first problem: after two deaths
  // the device gets no more problems, and device 0 runs the rest.
  const std::vector<ProblemResult> identities = Identities(8);
  const std::vector<ProblemResult> results = RunOnWorkers(
      identities, AllOf(identities), Devices({"0", "1"}),
      [&](size_t i) {
        if (std::string(std::getenv("CUDA_VISIBLE_DEVICES")) == "1")
          kill(getpid(), SIGKILL);
        return FakeWork(identities[i], 0.05);
      },
      nullptr, nullptr);
  int lost = 0;
  for (const ProblemResult& result : results) {
    if (result.status == "lost") {
      ++lost;
      EXPECT_EQ(result.gpu, "1");
    } else {
      EXPECT_EQ(result.status, "passed");
      EXPECT_EQ(result.gpu, "0");
    }
  }
  EXPECT_EQ(lost, 2);
}

TEST(GpuWorkers, WithEveryDeviceRetiredTheRestIsReportedNotRun) {
  const std::vector<ProblemResult> identities = Identities(5);
  WorkerPoolOptions options;
  options.deaths_before_retiring = 1;
  const std::vector<ProblemResult> results = RunOnWorkers(
      identities, AllOf(identities), Devices({"3"}),
      [&](size_t) -> ProblemResult { _exit(7); }, nullptr, nullptr, options);
  EXPECT_EQ(results[0].status, "lost");
  EXPECT_THAT(results[0].message, HasSubstr("died (exit code 7)"));
  for (size_t i = 1; i < results.size(); ++i) {
    EXPECT_EQ(results[i].status, "lost");
    EXPECT_THAT(
        results[i].message,
        HasSubstr("not run: no GPU left (GPU 3: its worker died 1 time)"));
  }
}

TEST(GpuWorkers, InterruptingKirBenchStopsEveryWorkerAndItsProblem) {
  // Each worker's problem process sends its pid back, then hangs.
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const std::vector<ProblemResult> identities = Identities(4);
  const pid_t bench = fork();
  ASSERT_GE(bench, 0);
  if (bench == 0) {
    close(pipe_fds[0]);
    RunOnWorkers(
        identities, AllOf(identities), Devices({"0", "1"}),
        [&](size_t i) {
          return RunInChild(
              [&] {
                const pid_t self = getpid();
                if (write(pipe_fds[1], &self, sizeof(self)) != sizeof(self))
                  _exit(1);
                while (true) pause();
                return ProblemResult();
              },
              /*timeout_seconds=*/60, identities[i]);
        },
        nullptr, nullptr);
    _exit(0);
  }
  close(pipe_fds[1]);
  pid_t problems[2] = {0, 0};
  for (pid_t& problem : problems)
    ASSERT_EQ(read(pipe_fds[0], &problem, sizeof(problem)),
              static_cast<ssize_t>(sizeof(problem)));
  close(pipe_fds[0]);
  kill(bench, SIGTERM);
  int status = 0;
  ASSERT_EQ(waitpid(bench, &status, 0), bench);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  for (pid_t problem : problems)
    EXPECT_TRUE(GoneSoon(problem)) << "process " << problem << " still runs";
}

TEST(GpuWorkers, WhatAProblemPrintsDoesNotDisturbTheQueue) {
  // Answers travel on a pipe of their own, not on stdout.
  const std::vector<ProblemResult> identities = Identities(3);
  const std::vector<ProblemResult> results = RunOnWorkers(
      identities, AllOf(identities), Devices({"0"}),
      [&](size_t i) {
        std::printf("12\nnot an answer\n");
        std::fflush(stdout);
        return FakeWork(identities[i], 0);
      },
      nullptr, nullptr);
  for (const ProblemResult& result : results)
    EXPECT_EQ(result.status, "passed");
}

}  // namespace
}  // namespace kir::bench
