// Integration across network namespaces: the coordinator runs in one namespace, a
// real worker and the `mtune` CLI in another, joined by a veth pair on a private
// /30, so every RPC crosses real interfaces (not loopback). The namespaces are made
// by the test itself, named after its pid, and deleted by a guard object even when
// an assertion fails; namespaces left by a test process that died are swept first.
// Skips (with the reason) when not root or when namespaces cannot be created.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "db/store.h"
#include "gtest/gtest.h"
#include "tests/subprocess.h"

namespace mtune {
namespace {

using testing::MakeTempDir;
using testing::ReadFile;
using testing::Subprocess;

constexpr char kPrefix[] = "mtune-test-";
constexpr char kProblem[] = "matmul:m=64,n=48,k=32:f32";
// The /30: the coordinator's side and the worker's side.
constexpr char kCoordinatorIp[] = "10.213.0.1";
constexpr char kWorkerIp[] = "10.213.0.2";

std::string IpBinary() {
  for (const char* path : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"})
    if (access(path, X_OK) == 0) return path;
  return "";
}

// Runs a shell command; returns its exit code and fills `output` with stdout+stderr.
int Shell(const std::string& command, std::string* output = nullptr) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) text.append(buf, n);
  const int status = pclose(pipe);
  if (output) *output = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Deletes namespaces of earlier test processes that no longer exist.
void SweepStaleNamespaces(const std::string& ip) {
  std::string list;
  if (Shell(ip + " netns list", &list) != 0) return;
  for (absl::string_view line : absl::StrSplit(list, '\n')) {
    std::string name(line.substr(0, line.find(' ')));
    if (name.rfind(kPrefix, 0) != 0) continue;
    // mtune-test-<pid>-{c,w}
    std::vector<std::string> parts = absl::StrSplit(name.substr(sizeof kPrefix - 1), '-');
    if (parts.size() != 2) continue;
    const pid_t pid = static_cast<pid_t>(atoi(parts[0].c_str()));
    if (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH) Shell(ip + " netns del " + name);
  }
}

// Two namespaces joined by a veth pair; deleted (with the pair) on destruction.
class NamespacePair {
 public:
  explicit NamespacePair(std::string ip) : ip_(std::move(ip)) {
    const std::string id = std::to_string(getpid());
    coordinator_ns = absl::StrCat(kPrefix, id, "-c");
    worker_ns = absl::StrCat(kPrefix, id, "-w");
    // Interface names have at most 15 characters.
    coordinator_if = absl::StrCat("mtc", id);
    worker_if = absl::StrCat("mtw", id);
  }
  ~NamespacePair() {
    // Deleting a namespace destroys the veth end inside it, and so the pair.
    for (const std::string& ns : created_) Shell(ip_ + " netns del " + ns);
    Shell(ip_ + " link del " + coordinator_if);  // still in the root namespace after a failure
  }

  // Empty on success, else what failed.
  std::string Create() {
    for (const std::string& ns : {coordinator_ns, worker_ns}) {
      std::string out;
      if (Shell(ip_ + " netns add " + ns, &out) != 0) return "ip netns add " + ns + ": " + out;
      created_.push_back(ns);
    }
    const std::vector<std::string> steps = {
        absl::StrCat("link add ", coordinator_if, " type veth peer name ", worker_if),
        absl::StrCat("link set ", coordinator_if, " netns ", coordinator_ns),
        absl::StrCat("link set ", worker_if, " netns ", worker_ns),
        absl::StrCat("-n ", coordinator_ns, " addr add ", kCoordinatorIp, "/30 dev ", coordinator_if),
        absl::StrCat("-n ", worker_ns, " addr add ", kWorkerIp, "/30 dev ", worker_if),
        absl::StrCat("-n ", coordinator_ns, " link set ", coordinator_if, " up"),
        absl::StrCat("-n ", worker_ns, " link set ", worker_if, " up"),
        absl::StrCat("-n ", coordinator_ns, " link set lo up"),
        absl::StrCat("-n ", worker_ns, " link set lo up"),
    };
    for (const std::string& step : steps) {
      std::string out;
      if (Shell(ip_ + " " + step, &out) != 0) return "ip " + step + ": " + out;
    }
    return "";
  }

  // argv that runs `argv` inside namespace `ns`.
  std::vector<std::string> In(const std::string& ns, std::vector<std::string> argv) const {
    argv.insert(argv.begin(), {ip_, "netns", "exec", ns});
    return argv;
  }

  // Bytes received on `interface` inside `ns` (its own /sys view).
  int64_t RxBytes(const std::string& ns, const std::string& interface) const {
    std::string out;
    if (Shell(absl::StrCat(ip_, " netns exec ", ns, " cat /sys/class/net/", interface,
                         "/statistics/rx_bytes"),
            &out) != 0)
      return -1;
    return atoll(out.c_str());
  }

  std::string coordinator_ns, worker_ns, coordinator_if, worker_if;

 private:
  std::string ip_;
  std::vector<std::string> created_;
};

TEST(NetworkNamespaces, WorkerInAnotherNamespaceCompletesAJobOverVeth) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to create network namespaces (ip netns add)";
  const std::string ip = IpBinary();
  if (ip.empty()) GTEST_SKIP() << "the ip command (iproute2) is not installed";
  SweepStaleNamespaces(ip);
  NamespacePair net(ip);
  if (std::string why = net.Create(); !why.empty())
    GTEST_SKIP() << "cannot create network namespaces and a veth pair here: " << why;

  const std::string dir = MakeTempDir("mtune-netns-");
  const std::string db_path = dir + "/mtune.sqlite";
  Subprocess coordinator(
      net.In(net.coordinator_ns,
             {MTUNE_COORDINATOR_BIN, "--listen", absl::StrCat(kCoordinatorIp, ":0"), "--port-file",
              dir + "/port", "--db", db_path, "--min-measure", "0.02",
              // Plaintext on a non-loopback address: a private veth pair made here.
              "--insecure"}),
      dir + "/coordinator.log");
  for (int i = 0; i < 400 && ReadFile(dir + "/port").empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  const std::string port = std::string(absl::StripAsciiWhitespace(ReadFile(dir + "/port")));
  ASSERT_FALSE(port.empty()) << coordinator.Log();
  const std::string address = absl::StrCat(kCoordinatorIp, ":", port);

  Subprocess worker(net.In(net.worker_ns, {MTUNE_WORKER_BIN, "--coordinator", address, "--cpu",
                                          "0", "--name", "netns-worker", "--give-up-after", "60",
                                          "--insecure"}),
                    dir + "/worker.log");
  const int64_t rx_before = net.RxBytes(net.coordinator_ns, net.coordinator_if);

  // The client also talks from the worker's namespace: no route leads to loopback.
  std::vector<std::string> submit =
      net.In(net.worker_ns, {MTUNE_CLI_BIN, "submit", "--coordinator", address, "--problem",
                             kProblem, "--search", "random", "--trials", "3", "--seed", "5",
                             "--wait", "--insecure"});
  std::string command = "timeout 240";
  for (const std::string& arg : submit) command += " '" + arg + "'";
  std::string output;
  const int rc = Shell(command, &output);
  ASSERT_EQ(rc, 0) << "mtune submit --wait across namespaces failed:\n"
                   << output << "\ncoordinator:\n" << coordinator.Log() << "\nworker:\n"
                   << worker.Log();

  // Every trial stored, measured by the worker across the veth pair.
  auto store = db::Store::Open(db_path);
  ASSERT_TRUE(store.ok()) << store.status();
  auto job = (*store)->GetJob(1);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->state(), mtune::v1::JOB_STATE_SUCCEEDED) << job->message();
  auto results = (*store)->ListResults(1, kProblem, 0);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 3u);
  std::set<std::string> hashes;
  for (const auto& r : *results) {
    EXPECT_EQ(r.worker_name(), "netns-worker");
    hashes.insert(r.candidate().hash());
  }
  EXPECT_EQ(hashes.size(), 3u);
  EXPECT_NE(worker.Log().find("registered as netns-worker"), std::string::npos) << worker.Log();
  // Traffic went through the veth: the coordinator's end received the RPCs.
  const int64_t rx_after = net.RxBytes(net.coordinator_ns, net.coordinator_if);
  EXPECT_GT(rx_after - rx_before, 1000) << "rx bytes " << rx_before << " -> " << rx_after;
}

}  // namespace
}  // namespace mtune
