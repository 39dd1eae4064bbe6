#include "core/python_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace gpupin {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const fs::path kFixtures = fs::path(GPUPIN_TEST_SOURCE_DIR) / "tests/fixtures/python";

std::optional<std::string> ReadDisk(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

PythonFile Fixture(const std::string& name) {
  std::string path = (kFixtures / name).string();
  return {path, ReadDisk(path).value_or("")};
}

const char* KindMarker(PythonFindingKind kind) {
  switch (kind) {
    case PythonFindingKind::kVisibilitySetAfterImport:
      return "set-after-import";
    case PythonFindingKind::kVisibilitySetAfterCudaInit:
      return "set-after-cuda-init";
    case PythonFindingKind::kVisibilitySetAfterHarmlessImport:
      return "harmless-torch-import";
    case PythonFindingKind::kDataParallelWithoutDeviceIds:
      return "data-parallel";
  }
  return "?";
}

// Each fixture marks the lines that must be reported with "# EXPECT: <kind>";
// every other line must stay quiet.
TEST(PythonCheckFixturesTest, ReportsExactlyTheMarkedLines) {
  int fixtures = 0;
  for (const auto& entry : fs::directory_iterator(kFixtures)) {
    if (entry.path().extension() != ".py") continue;
    ++fixtures;
    PythonFile file = Fixture(entry.path().filename().string());
    std::set<std::pair<int, std::string>> expected;
    std::istringstream lines(file.text);
    std::string text;
    for (int line = 1; std::getline(lines, text); ++line) {
      size_t marker = text.find("# EXPECT: ");
      if (marker != std::string::npos) expected.insert({line, text.substr(marker + 10)});
    }
    std::set<std::pair<int, std::string>> actual;
    for (const PythonFinding& f : CheckPythonFiles({file}, ReadDisk)) {
      EXPECT_EQ(f.path, file.path);
      actual.insert({f.line, KindMarker(f.kind)});
    }
    EXPECT_EQ(actual, expected) << entry.path().filename();
  }
  EXPECT_GE(fixtures, 10);
}

TEST(PythonCheckTest, NamesTheImportAndTheFix) {
  auto findings = CheckPythonFiles(
      {{"serve.py", "import os\nimport vllm\nos.environ['CUDA_VISIBLE_DEVICES'] = '1'\n"}},
      nullptr);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].line, 3);
  EXPECT_THAT(findings[0].message,
              HasSubstr("CUDA_VISIBLE_DEVICES is set after vllm is imported (line 2)"));
  EXPECT_THAT(findings[0].fix, HasSubstr("CUDA_VISIBLE_DEVICES=... python serve.py"));
}

TEST(PythonCheckTest, ABareImportTorchIsSaidToBeHarmless) {
  auto findings = CheckPythonFiles({Fixture("main_block.py")}, ReadDisk);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].kind, PythonFindingKind::kVisibilitySetAfterHarmlessImport);
  EXPECT_THAT(findings[0].message,
              HasSubstr("CUDA_VISIBLE_DEVICES is set after `import torch` (line 2): harmless, "
                        "since torch initialises CUDA at its first use"));
  EXPECT_EQ(findings[0].fix, "") << "nothing to do: the finding is ok";
}

TEST(PythonCheckTest, NamesTheCallThatInitialisedCuda) {
  auto findings = CheckPythonFiles({Fixture("cuda_init_call.py")}, ReadDisk);
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0].kind, PythonFindingKind::kVisibilitySetAfterCudaInit);
  EXPECT_THAT(findings[0].message,
              HasSubstr("CUDA_VISIBLE_DEVICES is set after torch.cuda.set_device() (line 6) "
                        "initialised CUDA; the setting is ignored"));
  EXPECT_THAT(findings[0].fix, HasSubstr("set it before line 6"));
}

// The one finding for `import os`, `import torch`, `line`, then the
// variable set.
PythonFinding FindingAfter(const std::string& line) {
  auto findings =
      CheckPythonFiles({{"late.py", "import os\nimport torch\n" + line +
                                        "\nos.environ['CUDA_VISIBLE_DEVICES'] = '1'\n"}},
                       nullptr);
  EXPECT_EQ(findings.size(), 1u) << line;
  return findings.empty() ? PythonFinding{} : findings[0];
}

TEST(PythonCheckTest, ATensorOrModelOnTheGpuInitialisedCuda) {
  for (const auto& [line, call] : std::vector<std::pair<std::string, std::string>>{
           {"x = torch.zeros(3, device=\"cuda\")", "a tensor on device=\"cuda\""},
           {"x = torch.randn(3).to('cuda:0')", ".to(\"cuda\")"},
           {"model = torch.nn.Linear(2, 2).cuda()", ".cuda()"},
           {"model.to(torch.device(\"cuda\"))", ".to(\"cuda\")"},
           {"print(torch.cuda.get_device_name(0))", "torch.cuda.get_device_name()"},
           {"torch.cuda.synchronize()", "torch.cuda.synchronize()"},
           {"free, total = torch.cuda.mem_get_info()", "torch.cuda.mem_get_info()"}}) {
    PythonFinding finding = FindingAfter(line);
    EXPECT_EQ(finding.kind, PythonFindingKind::kVisibilitySetAfterCudaInit) << line;
    EXPECT_THAT(finding.message, HasSubstr("CUDA_VISIBLE_DEVICES is set after " + call +
                                           " (line 3) initialised CUDA"));
  }
}

TEST(PythonCheckTest, ANameForACudaDeviceInitialisesCudaWhereItIsUsed) {
  for (const auto& [use, call] : std::vector<std::pair<std::string, std::string>>{
           {"model.to(device)", ".to(device)"},
           {"x = torch.ones(2, device=device)", "a tensor on device=device"}}) {
    auto findings = CheckPythonFiles({{"train.py",
                                       "import os\nimport torch\ndevice = torch.device(\"cuda\" if "
                                       "torch.backends.cudnn.enabled else \"cpu\")\n" +
                                           use + "\nos.environ['CUDA_VISIBLE_DEVICES'] = '1'\n"}},
                                     nullptr);
    ASSERT_EQ(findings.size(), 1u) << use;
    EXPECT_THAT(findings[0].message, HasSubstr("CUDA_VISIBLE_DEVICES is set after " + call +
                                               " (line 4) initialised CUDA"));
  }
  // Another name, or the name used some other way, is no CUDA use.
  EXPECT_EQ(FindingAfter("cpu = \"cpu\"; model.to(cpu)").kind,
            PythonFindingKind::kVisibilitySetAfterHarmlessImport);
}

TEST(PythonCheckTest, NamingACudaDeviceInitialisesNothing) {
  for (const char* line : {"dev = torch.device(\"cuda\")", "device = \"cuda\"",
                           "x = torch.zeros(3, device=\"cpu\")"}) {
    EXPECT_EQ(FindingAfter(line).kind, PythonFindingKind::kVisibilitySetAfterHarmlessImport)
        << line;
  }
}

TEST(PythonCheckTest, DeviceOrderFixSuggestsPciBusId) {
  auto findings = CheckPythonFiles(
      {{"order.py", "import jax\nimport os\nos.environ['CUDA_DEVICE_ORDER'] = 'PCI_BUS_ID'\n"}},
      nullptr);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0].message, HasSubstr("CUDA_DEVICE_ORDER is set after jax"));
  EXPECT_THAT(findings[0].fix, HasSubstr("CUDA_DEVICE_ORDER=PCI_BUS_ID python order.py"));
}

TEST(PythonCheckTest, LocalModuleBesideTheFileCountsThroughIt) {
  auto findings = CheckPythonFiles({Fixture("uses_local_module.py")}, ReadDisk);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0].message,
              HasSubstr("after transformers is imported (line 2, through helper_module.py)"));
}

TEST(PythonCheckTest, WithoutAReaderTheOtherGivenFilesAreTheLocalModules) {
  PythonFile train{"jobs/train.py",
                   "import os\nimport mymod\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\n"};
  PythonFile mymod{"lib/mymod.py", "import accelerate\n"};
  EXPECT_TRUE(CheckPythonFiles({train}, nullptr).empty());
  auto findings = CheckPythonFiles({train, mymod}, nullptr);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].path, "jobs/train.py");
  EXPECT_THAT(findings[0].message, HasSubstr("accelerate is imported (line 2, through mymod.py)"));
}

TEST(PythonCheckTest, FollowsPackagesAndRelativeImportsTransitively) {
  std::map<std::string, std::string> disk = {
      {"proj/pkg/__init__.py", "from .models import net\n"},
      {"proj/pkg/models.py", "import lightning as L\n"},
  };
  PythonFileReader read = [&disk](const std::string& path) -> std::optional<std::string> {
    auto it = disk.find(path);
    if (it == disk.end()) return std::nullopt;
    return it->second;
  };
  auto findings = CheckPythonFiles(
      {{"proj/run.py",
        "import os\nfrom pkg import train\nos.putenv('CUDA_VISIBLE_DEVICES', '1')\n"}},
      read);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0].message,
              HasSubstr("lightning is imported (line 2, through pkg/__init__.py)"));
}

TEST(PythonCheckTest, ImportCyclesEnd) {
  std::vector<PythonFile> files = {
      {"a.py", "import b\nimport os\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\n"},
      {"b.py", "import a\n"},
  };
  EXPECT_TRUE(CheckPythonFiles(files, nullptr).empty());
  files.push_back({"c.py", "import b\nimport keras\n"});
  files[1].text = "import a\nimport c\n";
  EXPECT_EQ(CheckPythonFiles(files, nullptr).size(), 1u);
}

TEST(PythonCheckTest, FindingsAreSortedByFileAndLine) {
  std::string body =
      "import torch\nimport os\nnn.DataParallel(m)\nos.environ['CUDA_VISIBLE_DEVICES']='1'\n";
  auto findings = CheckPythonFiles({{"z.py", body}, {"a.py", body}}, nullptr);
  std::vector<std::pair<std::string, int>> order;
  for (const auto& f : findings) order.emplace_back(f.path, f.line);
  EXPECT_EQ(order, (std::vector<std::pair<std::string, int>>{
                       {"a.py", 3}, {"a.py", 4}, {"z.py", 3}, {"z.py", 4}}));
}

TEST(PythonCheckTest, FormatsLikeACompiler) {
  PythonFinding f{"train.py", 12, PythonFindingKind::kDataParallelWithoutDeviceIds, "what", "fix"};
  EXPECT_EQ(FormatPythonFinding(f), "train.py:12: what; fix");
}

TEST(PythonCheckTest, SurvivesBrokenSource) {
  for (const char* source : {"os.environ[", "os.environ['CUDA_VISIBLE_DEVICES'", "from", "import",
                             "from . import", "DataParallel(", "if:", "def f(:\n  import torch\n",
                             "import torch\nos.environ['CUDA_VISIBLE_DEVICES] = 1\n",
                             "import torch\nos.environ.update(", "from os import (environ"}) {
    auto findings = CheckPythonFiles({{"x.py", source}}, nullptr);
    for (const auto& f : findings) {
      EXPECT_GE(f.line, 1) << source;
      EXPECT_LE(f.line, 2) << source;
    }
  }
}

}  // namespace
}  // namespace gpupin
