#include "core/python_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <set>
#include <string_view>

#include "core/python_tokenizer.h"

namespace gpupin {
namespace {

namespace fs = std::filesystem;
using K = PyTokenKind;

// Frameworks that may initialise CUDA, and with it read CUDA_VISIBLE_DEVICES
// once, when imported or soon after. Whether a given version does so at
// import time varies, which is why the finding says "may".
constexpr std::array<std::string_view, 17> kFrameworks = {
    "torch",      "tensorflow",  "jax",
    "jaxlib",     "flax",        "transformers",
    "accelerate", "lightning",   "pytorch_lightning",
    "keras",      "deepspeed",   "vllm",
    "cupy",       "cupyx",       "numba",
    "tensorrt",   "onnxruntime",
};

// torch initialises CUDA at its first use, never at import: a bare `import
// torch` before the variable is set is harmless.
constexpr std::string_view kLazyFramework = "torch";

// torch.cuda calls that initialise CUDA (and with it read the variables).
constexpr std::array<std::string_view, 11> kCudaInitCalls = {
    "init",
    "set_device",
    "is_available",
    "device_count",
    "current_device",
    "get_device_name",
    "get_device_properties",
    "get_device_capability",
    "synchronize",
    "mem_get_info",
    "set_per_process_memory_fraction",
};

constexpr std::array<std::string_view, 2> kVariables = {"CUDA_VISIBLE_DEVICES",
                                                        "CUDA_DEVICE_ORDER"};

constexpr std::array<std::string_view, 13> kCompoundKeywords = {
    "def",  "class", "if",     "elif",    "else",  "for",  "while",
    "with", "try",   "except", "finally", "match", "case",
};

// The word lists above are constants, not sets, so that no gpupin command
// builds them at start-up; each is short enough to search in order.
template <size_t N>
bool Lists(const std::array<std::string_view, N>& words, std::string_view word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

// Where a statement runs: the `def` blocks around it (by the token index of
// their keyword) and whether it sits under `if TYPE_CHECKING:`.
struct Scope {
  std::vector<size_t> defs;
  bool type_checking_only = false;
};

struct Statement {
  size_t begin = 0;  // token range [begin, end)
  size_t end = 0;
  Scope scope;
};

struct Import {
  size_t token = 0;  // position in the token stream: the order of execution
  int line = 0;
  std::string module;              // dotted; relative imports keep their leading dots
  std::vector<std::string> names;  // from MODULE import NAMES
  Scope scope;
};

struct Assignment {
  size_t token = 0;
  int line = 0;
  std::string variable;
  Scope scope;
};

// A torch.cuda call that initialises CUDA: "torch.cuda.set_device".
struct CudaInitCall {
  size_t token = 0;
  int line = 0;
  std::string call;
  Scope scope;
};

struct ParsedFile {
  std::vector<Import> imports;
  std::vector<Assignment> assignments;
  std::vector<CudaInitCall> cuda_inits;
  std::vector<int> data_parallel_lines;
};

class TokenView {
 public:
  explicit TokenView(const std::vector<PyToken>& tokens) : t_(tokens) {}

  bool Name(size_t i, std::string_view text) const {
    return i < t_.size() && t_[i].kind == K::kName && t_[i].text == text;
  }
  bool Op(size_t i, std::string_view text) const {
    return i < t_.size() && t_[i].kind == K::kOp && t_[i].text == text;
  }
  bool IsName(size_t i) const { return i < t_.size() && t_[i].kind == K::kName; }
  bool IsOpen(size_t i) const { return Op(i, "(") || Op(i, "[") || Op(i, "{"); }
  bool IsClose(size_t i) const { return Op(i, ")") || Op(i, "]") || Op(i, "}"); }
  const PyToken& operator[](size_t i) const { return t_[i]; }
  size_t size() const { return t_.size(); }

  // The first `op` at bracket depth 0 in [begin, end), or `end`.
  size_t FindTopLevel(size_t begin, size_t end, std::string_view op) const {
    int depth = 0;
    for (size_t i = begin; i < end; ++i) {
      if (depth == 0 && Op(i, op)) return i;
      if (IsOpen(i)) ++depth;
      if (IsClose(i) && depth > 0) --depth;
    }
    return end;
  }

  // Adjacent string literals are one value ("CUDA_" "VISIBLE_DEVICES").
  // Advances `i` past them; nullopt when there are none or one is not constant.
  std::optional<std::string> StringRun(size_t& i, size_t end) const {
    std::string value;
    size_t start = i;
    for (; i < end && t_[i].kind == K::kString; ++i) {
      auto part = PyStringValue(t_[i]);
      if (!part) return std::nullopt;
      value += *part;
    }
    if (i == start) return std::nullopt;
    return value;
  }

 private:
  const std::vector<PyToken>& t_;
};

// Splits the token stream into simple statements with the scope each runs in.
class StatementSplitter {
 public:
  explicit StatementSplitter(const TokenView& t) : t_(t) {}

  std::vector<Statement> Run() {
    size_t i = 0;
    while (i < t_.size() && t_[i].kind != K::kEnd) {
      if (t_[i].kind == K::kNewline || t_[i].kind == K::kIndent || t_[i].kind == K::kDedent) {
        ++i;
        continue;
      }
      size_t end = i;
      while (end < t_.size() && t_[end].kind != K::kNewline && t_[end].kind != K::kEnd) ++end;
      int level = t_[i].indent_level;
      while (!open_.empty() && open_.back().body_level > level) open_.pop_back();
      LogicalLine(i, end, level);
      i = end;
    }
    return std::move(out_);
  }

 private:
  struct Block {
    int body_level = 0;
    std::optional<size_t> def;
    bool type_checking = false;
  };

  Scope CurrentScope(const std::optional<Block>& inline_block = std::nullopt) const {
    Scope scope;
    auto add = [&scope](const Block& b) {
      if (b.def) scope.defs.push_back(*b.def);
      scope.type_checking_only = scope.type_checking_only || b.type_checking;
    };
    for (const Block& b : open_) add(b);
    if (inline_block) add(*inline_block);
    return scope;
  }

  void LogicalLine(size_t begin, size_t end, int level) {
    size_t k = t_.Name(begin, "async") ? begin + 1 : begin;
    if (k < end && t_[k].kind == K::kName && Lists(kCompoundKeywords, t_[k].text) &&
        !IsSoftKeywordUsedAsName(k)) {
      size_t colon = t_.FindTopLevel(k + 1, end, ":");
      if (colon < end) {
        Block block{level + 1, std::nullopt, IsTypeCheckingGuard(k, colon)};
        if (t_[k].text == "def") block.def = k;
        // The header itself runs in the enclosing scope (conditions, default values).
        out_.push_back({begin, colon, CurrentScope()});
        if (colon + 1 < end) {
          SimpleStatements(colon + 1, end, CurrentScope(block));
        } else {
          open_.push_back(block);
        }
        return;
      }
    }
    SimpleStatements(begin, end, CurrentScope());
  }

  // `match` and `case` are keywords only at the start of a block header.
  bool IsSoftKeywordUsedAsName(size_t k) const {
    if (t_[k].text != "match" && t_[k].text != "case") return false;
    return t_.Op(k + 1, "=") || t_.Op(k + 1, ".") || t_.Op(k + 1, ":") || t_.Op(k + 1, ",");
  }

  // `if TYPE_CHECKING:` or `if typing.TYPE_CHECKING:`: never runs.
  bool IsTypeCheckingGuard(size_t k, size_t colon) const {
    if (!t_.Name(k, "if")) return false;
    return (colon == k + 2 && t_.Name(k + 1, "TYPE_CHECKING")) ||
           (colon == k + 4 && t_.IsName(k + 1) && t_.Op(k + 2, ".") &&
            t_.Name(k + 3, "TYPE_CHECKING"));
  }

  void SimpleStatements(size_t begin, size_t end, const Scope& scope) {
    while (begin < end) {
      size_t semicolon = t_.FindTopLevel(begin, end, ";");
      if (semicolon > begin) out_.push_back({begin, semicolon, scope});
      begin = semicolon + 1;
    }
  }

  const TokenView& t_;
  std::vector<Block> open_;
  std::vector<Statement> out_;
};

// The names by which this file reaches os.environ and os.putenv.
struct OsAliases {
  std::set<std::string, std::less<>> os = {"os"};
  std::set<std::string, std::less<>> environ;  // from os import environ [as e]
  std::set<std::string, std::less<>> putenv;   // from os import putenv [as p]
};

// The names by which this file reaches torch and torch.cuda.
struct TorchAliases {
  std::set<std::string, std::less<>> torch;  // import torch [as t]
  std::set<std::string, std::less<>> cuda;  // import torch.cuda as c; from torch import cuda [as c]
};

class FileParser {
 public:
  explicit FileParser(std::string_view text) : tokens_(TokenizePython(text)), t_(tokens_) {}

  ParsedFile Run() {
    std::vector<Statement> statements = StatementSplitter(t_).Run();
    for (const Statement& s : statements) ParseImport(s);
    for (const Statement& s : statements) {
      FindCudaDeviceName(s);
      for (size_t k = s.begin; k < s.end; ++k) {
        FindEnvironmentWrite(s, k);
        FindCudaInit(s, k);
        FindCudaTensor(s, k);
        FindDataParallel(s, k);
      }
    }
    return std::move(parsed_);
  }

 private:
  // `a.b.c` at `i`; advances past it.
  std::string DottedName(size_t& i, size_t end) const {
    std::string name;
    while (i < end && t_.IsName(i)) {
      name += t_[i].text;
      if (!(t_.Op(i + 1, ".") && t_.IsName(i + 2))) {
        ++i;
        break;
      }
      name += '.';
      i += 2;
    }
    return name;
  }

  // `as NAME` at `i`, if present; advances past it.
  std::optional<std::string> AsName(size_t& i, size_t end) const {
    if (i + 1 < end && t_.Name(i, "as") && t_.IsName(i + 1)) {
      i += 2;
      return std::string(t_[i - 1].text);
    }
    return std::nullopt;
  }

  void ParseImport(const Statement& s) {
    size_t i = s.begin;
    Import base{s.begin, t_[s.begin].line, "", {}, s.scope};
    if (t_.Name(i, "import")) {
      ++i;
      while (i < s.end) {
        Import imp = base;
        imp.module = DottedName(i, s.end);
        if (imp.module.empty()) return;
        auto alias = AsName(i, s.end);
        if (imp.module == "os" || imp.module.starts_with("os."))
          aliases_.os.insert(alias.value_or("os"));
        if (imp.module == "torch" || (imp.module.starts_with("torch.") && !alias))
          torch_.torch.insert(alias.value_or("torch"));
        if (imp.module == "torch.cuda" && alias) torch_.cuda.insert(*alias);
        parsed_.imports.push_back(std::move(imp));
        if (!t_.Op(i, ",")) return;
        ++i;
      }
      return;
    }
    if (!t_.Name(i, "from")) return;
    ++i;
    Import imp = base;
    for (; t_.Op(i, ".") || t_.Op(i, "..."); ++i) imp.module += t_[i].text;
    imp.module += DottedName(i, s.end);
    if (!t_.Name(i, "import") || imp.module.empty()) return;
    for (++i; i < s.end; ++i) {
      if (!t_.IsName(i)) continue;  // parentheses, commas, `*`
      std::string name(t_[i].text);
      size_t next = i + 1;
      std::string bound = AsName(next, s.end).value_or(name);
      i = next - 1;
      if (imp.module == "os" && (name == "environ" || name == "environb")) {
        aliases_.environ.insert(bound);
      }
      if (imp.module == "os" && name == "putenv") aliases_.putenv.insert(bound);
      if (imp.module == "torch" && name == "cuda") torch_.cuda.insert(bound);
      imp.names.push_back(std::move(name));
    }
    parsed_.imports.push_back(std::move(imp));
  }

  void Record(const Statement& s, size_t k, const std::optional<std::string>& variable) {
    if (variable && Lists(kVariables, *variable)) {
      parsed_.assignments.push_back({k, t_[k].line, *variable, s.scope});
    }
  }

  // os.environ / environ at `k`: the index after it, or nullopt.
  std::optional<size_t> EnvironAt(size_t k) const {
    if (t_.IsName(k) && aliases_.os.contains(t_[k].text) && t_.Op(k + 1, ".") &&
        (t_.Name(k + 2, "environ") || t_.Name(k + 2, "environb"))) {
      return k + 3;
    }
    if (t_.IsName(k) && aliases_.environ.contains(t_[k].text)) return k + 1;
    return std::nullopt;
  }

  void FindEnvironmentWrite(const Statement& s, size_t k) {
    // An attribute of something else (self.os.environ) is not the process environment.
    if (k > s.begin && t_.Op(k - 1, ".")) return;
    if (auto m = EnvironAt(k)) {
      size_t i = *m;
      if (t_.Op(i, "[")) {
        ++i;
        auto variable = t_.StringRun(i, s.end);
        if (t_.Op(i, "]") && (t_.Op(i + 1, "=") || t_.Op(i + 1, "+="))) Record(s, k, variable);
      } else if (t_.Op(i, ".") && (t_.Name(i + 1, "setdefault") || t_.Name(i + 1, "__setitem__")) &&
                 t_.Op(i + 2, "(")) {
        i += 3;
        Record(s, k, t_.StringRun(i, s.end));
      } else if (t_.Op(i, ".") && t_.Name(i + 1, "update") && t_.Op(i + 2, "(")) {
        MappingKeys(s, k, i + 3, t_.FindTopLevel(i + 3, s.end, ")"));
      } else if (t_.Op(i, "|=")) {
        MappingKeys(s, k, i + 1, s.end);
      }
      return;
    }
    bool os_putenv = t_.IsName(k) && aliases_.os.contains(t_[k].text) && t_.Op(k + 1, ".") &&
                     t_.Name(k + 2, "putenv") && t_.Op(k + 3, "(");
    bool bare_putenv = t_.IsName(k) && aliases_.putenv.contains(t_[k].text) && t_.Op(k + 1, "(");
    if (os_putenv || bare_putenv) {
      size_t i = k + (os_putenv ? 4 : 2);
      Record(s, k, t_.StringRun(i, s.end));
    }
  }

  // Keys given in [begin, end): {"KEY": v} and KEY=v (update's keywords).
  void MappingKeys(const Statement& s, size_t k, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      if (t_.IsName(i) && t_.Op(i + 1, "=")) {
        Record(s, k, std::string(t_[i].text));
        continue;
      }
      size_t j = i;
      auto key = t_.StringRun(j, end);
      if (key && t_.Op(j, ":")) Record(s, k, key);
      if (j > i) i = j - 1;
    }
  }

  // torch.cuda.NAME( or CUDA.NAME( for NAME in kCudaInitCalls.
  void FindCudaInit(const Statement& s, size_t k) {
    if (k > s.begin && t_.Op(k - 1, ".")) return;
    if (!t_.IsName(k)) return;
    size_t call = 0;
    if (torch_.torch.contains(t_[k].text) && t_.Op(k + 1, ".") && t_.Name(k + 2, "cuda") &&
        t_.Op(k + 3, ".")) {
      call = k + 4;
    } else if (torch_.cuda.contains(t_[k].text) && t_.Op(k + 1, ".")) {
      call = k + 2;
    } else {
      return;
    }
    if (!t_.IsName(call) || !Lists(kCudaInitCalls, t_[call].text) || !t_.Op(call + 1, "(")) return;
    parsed_.cuda_inits.push_back(
        {k, t_[k].line, fmt::format("torch.cuda.{}()", t_[call].text), s.scope});
  }

  // `NAME = <a CUDA device>`: NAME then stands for one in `.to(NAME)` and
  // `device=NAME` (`device = torch.device("cuda")`; `model.to(device)`).
  // Naming a device initialises nothing; using it does.
  void FindCudaDeviceName(const Statement& s) {
    if (s.end - s.begin >= 3 && t_.IsName(s.begin) && t_.Op(s.begin + 1, "=") &&
        NamesCuda(s.begin + 2, s.end)) {
      cuda_device_names_.insert(std::string(t_[s.begin].text));
    }
  }

  // What puts a tensor or a model on the GPU, which initialises CUDA as the
  // calls above do: `.cuda(`, `.to(D` and a `device=D` argument, where D
  // names a CUDA device (not `torch.device("cuda")` alone, which only names
  // one).
  void FindCudaTensor(const Statement& s, size_t k) {
    const bool method = k > s.begin && t_.Op(k - 1, ".");
    std::string call;
    if (method && t_.Name(k, "cuda") && t_.Op(k + 1, "(")) {
      call = ".cuda()";
    } else if (method && t_.Name(k, "to") && t_.Op(k + 1, "(") && NamesCuda(k + 2, s.end)) {
      call = fmt::format(".to({})", DeviceText(k + 2));
    } else if (!method && t_.Name(k, "device") && t_.Op(k + 1, "=") && k > s.begin &&
               (t_.Op(k - 1, "(") || t_.Op(k - 1, ",")) && NamesCuda(k + 2, s.end)) {
      call = fmt::format("a tensor on device={}", DeviceText(k + 2));
    } else {
      return;
    }
    parsed_.cuda_inits.push_back({k, t_[k].line, call, s.scope});
  }

  // Whether the expression at `i` names a CUDA device: a string "cuda" or
  // "cuda:1", `torch.device(` of one, or a name assigned one before.
  bool NamesCuda(size_t i, size_t end) const {
    if (i < end && t_.IsName(i) && cuda_device_names_.contains(t_[i].text) &&
        (t_.Op(i + 1, ",") || t_.IsClose(i + 1)))
      return true;
    if (i + 4 < end && torch_.torch.contains(t_[i].text) && t_.Op(i + 1, ".") &&
        t_.Name(i + 2, "device") && t_.Op(i + 3, "("))
      i += 4;
    std::optional<std::string> value = t_.StringRun(i, end);
    return value && (*value == "cuda" || value->starts_with("cuda:"));
  }

  // How the finding quotes the device at `i` (NamesCuda held there).
  std::string DeviceText(size_t i) const {
    return cuda_device_names_.contains(t_[i].text) && !t_.Op(i + 1, ".") ? std::string(t_[i].text)
                                                                         : "\"cuda\"";
  }

  // DataParallel(module, device_ids=None, output_device=None, dim=0).
  void FindDataParallel(const Statement& s, size_t k) {
    if (!t_.Name(k, "DataParallel") || !t_.Op(k + 1, "(")) return;
    if (k > s.begin && (t_.Name(k - 1, "def") || t_.Name(k - 1, "class"))) return;
    int depth = 0;
    int argument = 0;
    bool at_argument_start = true;
    for (size_t i = k + 2; i < s.end; ++i) {
      if (depth == 0) {
        if (t_.IsClose(i)) break;
        if (t_.Op(i, ",")) {
          ++argument;
          at_argument_start = true;
          continue;
        }
        if (at_argument_start) {
          at_argument_start = false;
          if (t_.Op(i, "*") || t_.Op(i, "**")) return;  // cannot tell: do not guess
          bool keyword = t_.IsName(i) && t_.Op(i + 1, "=");
          size_t value = keyword ? i + 2 : i;
          bool is_none = t_.Name(value, "None") && (t_.Op(value + 1, ",") || t_.IsClose(value + 1));
          bool names_device_ids = keyword ? t_[i].text == "device_ids" : argument == 1;
          if (names_device_ids && !is_none) return;
        }
      }
      if (t_.IsOpen(i)) ++depth;
      if (t_.IsClose(i)) --depth;
    }
    parsed_.data_parallel_lines.push_back(t_[k].line);
  }

  std::vector<PyToken> tokens_;
  TokenView t_;
  OsAliases aliases_;
  TorchAliases torch_;
  // Names assigned a CUDA device so far, in the order statements run.
  std::set<std::string, std::less<>> cuda_device_names_;
  ParsedFile parsed_;
};

// Why an import counts: the framework it loads, and the local module it went through.
struct ImportCause {
  std::string framework;
  std::string via;  // "" for a direct import; else the local file, as a relative path
};

class Checker {
 public:
  Checker(const std::vector<PythonFile>& files, const PythonFileReader& read)
      : files_(files), read_(read) {}

  std::vector<PythonFinding> Run() {
    std::vector<PythonFinding> findings;
    for (const PythonFile& file : files_) CheckFile(file, findings);
    std::stable_sort(findings.begin(), findings.end(), [](const auto& a, const auto& b) {
      return std::tie(a.path, a.line) < std::tie(b.path, b.line);
    });
    return findings;
  }

 private:
  void CheckFile(const PythonFile& file, std::vector<PythonFinding>& findings) {
    ParsedFile parsed = FileParser(file.text).Run();
    std::vector<std::optional<ImportCause>> causes;
    for (const Import& imp : parsed.imports) causes.push_back(Cause(file.path, imp));
    std::string script = fs::path(file.path).filename().string();

    for (const Assignment& a : parsed.assignments) {
      std::string value = a.variable == "CUDA_DEVICE_ORDER" ? "PCI_BUS_ID" : "...";
      // A call that initialised CUDA says most; then an import that may
      // have; a bare `import torch` is only worth a word.
      auto init = std::find_if(
          parsed.cuda_inits.begin(), parsed.cuda_inits.end(),
          [&](const CudaInitCall& c) { return c.token < a.token && RunsBefore(c.scope, a.scope); });
      if (init != parsed.cuda_inits.end()) {
        findings.push_back(
            {file.path, a.line, PythonFindingKind::kVisibilitySetAfterCudaInit,
             fmt::format("{} is set after {} (line {}) initialised CUDA; the setting is ignored",
                         a.variable, init->call, init->line),
             fmt::format("set it before line {}, or outside Python: {}={} python {}", init->line,
                         a.variable, value, script)});
        continue;
      }
      std::optional<size_t> eager;
      std::optional<size_t> lazy;
      // Imports are in token order, so the first match is the earliest.
      for (size_t i = 0; i < parsed.imports.size(); ++i) {
        const Import& imp = parsed.imports[i];
        if (imp.token >= a.token || !causes[i] || !RunsBefore(imp.scope, a.scope)) continue;
        const bool harmless = causes[i]->framework == kLazyFramework && causes[i]->via.empty();
        std::optional<size_t>& first = harmless ? lazy : eager;
        if (!first) first = i;
      }
      if (eager) {
        const Import& imp = parsed.imports[*eager];
        const ImportCause& cause = *causes[*eager];
        std::string where = cause.via.empty()
                                ? fmt::format("line {}", imp.line)
                                : fmt::format("line {}, through {}", imp.line, cause.via);
        findings.push_back({file.path, a.line, PythonFindingKind::kVisibilitySetAfterImport,
                            fmt::format("{} is set after {} is imported ({}); CUDA may already be "
                                        "initialised, and then the setting is ignored",
                                        a.variable, cause.framework, where),
                            fmt::format("set it before that import, or outside Python: {}={} "
                                        "python {}",
                                        a.variable, value, script)});
      } else if (lazy) {
        findings.push_back(
            {file.path, a.line, PythonFindingKind::kVisibilitySetAfterHarmlessImport,
             fmt::format("{} is set after `import torch` (line {}): harmless, since torch "
                         "initialises CUDA at its first use (a torch.cuda call, a tensor on "
                         "\"cuda\"), not at import; keep that first use after this line",
                         a.variable, parsed.imports[*lazy].line),
             ""});
      }
    }
    for (int line : parsed.data_parallel_lines) {
      findings.push_back({file.path, line, PythonFindingKind::kDataParallelWithoutDeviceIds,
                          "nn.DataParallel without device_ids uses every visible GPU, including "
                          "cards that other jobs are using",
                          fmt::format("pass device_ids=[...], or start it on the cards it should "
                                      "use: gpupin run -n N -- python {}",
                                      script)});
    }
  }

  // An import or call at module level has run before anything that comes
  // after it; one inside a function, only before what follows it in that
  // function.
  static bool RunsBefore(const Scope& earlier, const Scope& later) {
    if (earlier.type_checking_only) return false;
    if (earlier.defs.empty()) return true;
    const std::vector<size_t>& defs = later.defs;
    return std::find(defs.begin(), defs.end(), earlier.defs.back()) != defs.end();
  }

  std::optional<ImportCause> Cause(const std::string& importer, const Import& imp) {
    if (imp.scope.type_checking_only) return std::nullopt;
    std::string_view top = std::string_view(imp.module).substr(0, imp.module.find('.'));
    if (Lists(kFrameworks, top)) return ImportCause{std::string(top), ""};
    fs::path dir = fs::path(importer).parent_path();
    for (const std::string& candidate : LocalCandidates(imp)) {
      if (auto framework = ModuleFramework(dir, candidate)) {
        return ImportCause{*framework, candidate};
      }
    }
    return std::nullopt;
  }

  // Files that `imp` may execute, relative to the importing file's folder.
  static std::vector<std::string> LocalCandidates(const Import& imp) {
    size_t dots = imp.module.find_first_not_of('.');
    if (dots == std::string::npos) dots = imp.module.size();
    fs::path base;
    for (size_t up = 1; up < dots; ++up) base /= "..";
    std::vector<fs::path> modules;
    fs::path path = base;
    std::string_view rest = std::string_view(imp.module).substr(dots);
    while (!rest.empty()) {
      size_t dot = rest.find('.');
      path /= std::string(rest.substr(0, dot));
      modules.push_back(path);
      rest = dot == std::string_view::npos ? "" : rest.substr(dot + 1);
    }
    for (const std::string& name : imp.names) modules.push_back(path / name);
    std::vector<std::string> out;
    for (const fs::path& m : modules) {
      out.push_back(fs::path(m).concat(".py").lexically_normal().generic_string());
      out.push_back((m / "__init__.py").lexically_normal().generic_string());
    }
    return out;
  }

  // The framework `candidate` (beside `dir`, or among the checked files)
  // imports at module level, directly or through its own local modules.
  std::optional<std::string> ModuleFramework(const fs::path& dir, const std::string& candidate) {
    std::string full = (dir / candidate).lexically_normal().generic_string();
    auto memo = memo_.find(full);
    if (memo != memo_.end()) return memo->second;
    // Also ends an import cycle here, and spares asking again for a file that is not there.
    memo_[full] = std::nullopt;
    auto text = LocalModuleText(full, candidate);
    if (!text) return std::nullopt;
    ParsedFile parsed = FileParser(*text).Run();
    std::optional<std::string> framework;
    for (const Import& imp : parsed.imports) {
      if (!imp.scope.defs.empty()) continue;
      if (auto cause = Cause(full, imp)) {
        framework = cause->framework;
        break;
      }
    }
    memo_[full] = framework;
    return framework;
  }

  std::optional<std::string> LocalModuleText(const std::string& full, const std::string& relative) {
    for (const PythonFile& f : files_) {
      if (fs::path(f.path).lexically_normal().generic_string() == full) return f.text;
    }
    if (read_) {
      if (auto text = read_(full)) return text;
    }
    if (relative.starts_with("../")) return std::nullopt;
    for (const PythonFile& f : files_) {
      std::string path = fs::path(f.path).lexically_normal().generic_string();
      if (path == relative || path.ends_with("/" + relative)) return f.text;
    }
    return std::nullopt;
  }

  const std::vector<PythonFile>& files_;
  const PythonFileReader& read_;
  std::map<std::string, std::optional<std::string>> memo_;
};

}  // namespace

std::vector<PythonFinding> CheckPythonFiles(const std::vector<PythonFile>& files,
                                            const PythonFileReader& read) {
  return Checker(files, read).Run();
}

const char* PythonFindingKindName(PythonFindingKind kind) {
  switch (kind) {
    case PythonFindingKind::kVisibilitySetAfterImport:
      return "visibility_set_after_import";
    case PythonFindingKind::kVisibilitySetAfterCudaInit:
      return "visibility_set_after_cuda_init";
    case PythonFindingKind::kVisibilitySetAfterHarmlessImport:
      return "visibility_set_after_harmless_import";
    case PythonFindingKind::kDataParallelWithoutDeviceIds:
      return "data_parallel_without_device_ids";
  }
  return "data_parallel_without_device_ids";
}

std::string FormatPythonFinding(const PythonFinding& finding) {
  return fmt::format("{}:{}: {}; {}", finding.path, finding.line, finding.message, finding.fix);
}

}  // namespace gpupin
