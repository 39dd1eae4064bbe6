#include "core/python_tokenizer.h"

#include <gtest/gtest.h>

#include <random>

namespace gpupin {
namespace {

using K = PyTokenKind;

// "kind:text@line/level" for each token, kEnd included, for compact expectations.
std::vector<std::string> Describe(std::string_view source) {
  std::vector<std::string> out;
  for (const PyToken& t : TokenizePython(source)) {
    const char* kind = "";
    switch (t.kind) {
      case K::kName:
        kind = "N";
        break;
      case K::kNumber:
        kind = "#";
        break;
      case K::kString:
        kind = "S";
        break;
      case K::kOp:
        kind = "O";
        break;
      case K::kNewline:
        kind = "NL";
        break;
      case K::kIndent:
        kind = "IN";
        break;
      case K::kDedent:
        kind = "DE";
        break;
      case K::kEnd:
        kind = "END";
        break;
    }
    out.push_back(std::string(kind) + ":" + std::string(t.text) + "@" + std::to_string(t.line) +
                  "/" + std::to_string(t.indent_level));
  }
  return out;
}

std::vector<std::string_view> Texts(std::string_view source, K kind) {
  std::vector<std::string_view> out;
  for (const PyToken& t : TokenizePython(source)) {
    if (t.kind == kind) out.push_back(t.text);
  }
  return out;
}

TEST(PythonTokenizerTest, NamesNumbersAndOperators) {
  EXPECT_EQ(Describe("x **= 0x1F + 1.5e-3 // .5 -> y"),
            (std::vector<std::string>{"N:x@1/0", "O:**=@1/0", "#:0x1F@1/0", "O:+@1/0",
                                      "#:1.5e-3@1/0", "O://@1/0", "#:.5@1/0", "O:->@1/0", "N:y@1/0",
                                      "NL:@1/0", "END:@1/0"}));
  EXPECT_EQ(Texts("a := b != c ... d", K::kOp), (std::vector<std::string_view>{":=", "!=", "..."}));
}

TEST(PythonTokenizerTest, IndentAndDedentFollowLogicalLines) {
  std::string source =
      "def f():\n"
      "    if x:\n"
      "\n"
      "        # a comment at any column\n"
      "  # another\n"
      "        y()\n"
      "    z\n"
      "w\n";
  EXPECT_EQ(Describe(source),
            (std::vector<std::string>{"N:def@1/0", "N:f@1/0",  "O:(@1/0", "O:)@1/0", "O::@1/0",
                                      "NL:@1/0",                                                 //
                                      "IN:@2/1",   "N:if@2/1", "N:x@2/1", "O::@2/1", "NL:@2/1",  //
                                      "IN:@6/2",   "N:y@6/2",  "O:(@6/2", "O:)@6/2", "NL:@6/2",  //
                                      "DE:@7/1",   "N:z@7/1",  "NL:@7/1",                        //
                                      "DE:@8/0",   "N:w@8/0",  "NL:@8/0", "END:@9/0"}));
}

TEST(PythonTokenizerTest, TabsIndentToMultiplesOfEight) {
  auto tokens = TokenizePython("if x:\n\ty\n        z\n");
  // A tab and eight spaces are the same column: no DEDENT between y and z.
  int dedents_before_end = 0;
  for (const PyToken& t : tokens) {
    if (t.kind == K::kName && t.text == "z") {
      EXPECT_EQ(t.indent_level, 1);
    }
    if (t.kind == K::kDedent) ++dedents_before_end;
  }
  EXPECT_EQ(dedents_before_end, 1);
}

TEST(PythonTokenizerTest, BracketsAndBackslashesJoinLines) {
  EXPECT_EQ(Describe("f(a,\n    b)\nx = 1 + \\\n  2\n"),
            (std::vector<std::string>{"N:f@1/0", "O:(@1/0", "N:a@1/0", "O:,@1/0", "N:b@2/0",
                                      "O:)@2/0", "NL:@2/0", "N:x@3/0", "O:=@3/0", "#:1@3/0",
                                      "O:+@3/0", "#:2@4/0", "NL:@4/0", "END:@5/0"}));
}

TEST(PythonTokenizerTest, StringsOfEveryForm) {
  std::string source =
      "a = 'x' \"y\" r'\\d' b\"z\" Rb'w' u'v' F\"{a}\" rf'{b}' '''t\n'q''' \"\"\"u\"\"\" "
      "'it\\'s'\n"
      "b = 1\n";
  EXPECT_EQ(Texts(source, K::kString),
            (std::vector<std::string_view>{"'x'", "\"y\"", "r'\\d'", "b\"z\"", "Rb'w'", "u'v'",
                                           "F\"{a}\"", "rf'{b}'", "'''t\n'q'''", "\"\"\"u\"\"\"",
                                           "'it\\'s'"}));
  auto tokens = TokenizePython(source);
  auto b = std::find_if(tokens.begin(), tokens.end(),
                        [](const PyToken& t) { return t.text == "b" && t.kind == K::kName; });
  ASSERT_NE(b, tokens.end());
  EXPECT_EQ(b->line, 3);  // the line inside the triple-quoted string counts
}

TEST(PythonTokenizerTest, NamesThatAreNotPrefixesStayNames) {
  EXPECT_EQ(Texts("ur'x' bb'y' print'z'", K::kName),
            (std::vector<std::string_view>{"ur", "bb", "print"}));
}

TEST(PythonTokenizerTest, FStringsWithNestedQuotesAreOneToken) {
  // Python 3.12 lets a replacement field reuse the outer quote.
  EXPECT_EQ(Texts("f\"{x[\"k\"]}\" + f'{y:{w}}' + f'{z!r:>10}' + f\"{f'{q}'}\"", K::kString),
            (std::vector<std::string_view>{"f\"{x[\"k\"]}\"", "f'{y:{w}}'", "f'{z!r:>10}'",
                                           "f\"{f'{q}'}\""}));
  // A format spec is literal text: a quote there is the outer string's end.
  EXPECT_EQ(Texts("f'{x:'", K::kString), (std::vector<std::string_view>{"f'{x:'"}));
}

TEST(PythonTokenizerTest, CommentsAndStringsHideCode) {
  auto names = Texts("x = 1  # os.environ['A'] = 1\ns = \"import torch\"\n", K::kName);
  EXPECT_EQ(names, (std::vector<std::string_view>{"x", "s"}));
}

TEST(PythonTokenizerTest, UnterminatedStringsEndAtTheirLineOrTheEnd) {
  EXPECT_EQ(Describe("s = 'abc\nt = 1\n"),
            (std::vector<std::string>{"N:s@1/0", "O:=@1/0", "S:'abc@1/0", "NL:@1/0", "N:t@2/0",
                                      "O:=@2/0", "#:1@2/0", "NL:@2/0", "END:@3/0"}));
  EXPECT_EQ(Texts("s = '''abc\nt = 1\n", K::kString),
            (std::vector<std::string_view>{"'''abc\nt = 1\n"}));
  EXPECT_EQ(Texts("s = 'abc\\", K::kString), (std::vector<std::string_view>{"'abc\\"}));
}

TEST(PythonTokenizerTest, CarriageReturnsEndLines) {
  auto tokens = TokenizePython("a\r\nb\rc");
  std::vector<int> lines;
  for (const PyToken& t : tokens) {
    if (t.kind == K::kName) lines.push_back(t.line);
  }
  EXPECT_EQ(lines, (std::vector<int>{1, 2, 3}));
}

TEST(PythonTokenizerTest, StrayClosersAndBadBytesDoNotUnbalance) {
  auto tokens = TokenizePython(")) $ ?\n  x\n\x01\xff\n");
  int indents = 0;
  int dedents = 0;
  for (const PyToken& t : tokens) {
    indents += t.kind == K::kIndent;
    dedents += t.kind == K::kDedent;
  }
  EXPECT_EQ(indents, dedents);
  EXPECT_EQ(tokens.back().kind, K::kEnd);
}

TEST(PythonTokenizerTest, InconsistentDedentStaysBalanced) {
  auto tokens = TokenizePython("if a:\n        b\n    c\nd\n");
  int indents = 0;
  int dedents = 0;
  for (const PyToken& t : tokens) {
    indents += t.kind == K::kIndent;
    dedents += t.kind == K::kDedent;
    if (t.text == "d") {
      EXPECT_EQ(t.indent_level, 0);
    }
  }
  EXPECT_EQ(indents, dedents);
}

TEST(PythonTokenizerTest, RandomBytesAlwaysGiveAStreamWithinTheLines) {
  std::mt19937 rng(7);
  const std::string alphabet = "ab_ \t\n\r\\'\"#()[]{}:=.rfb0x\x80";
  for (int round = 0; round < 2000; ++round) {
    std::string source;
    int length = static_cast<int>(rng() % 60);
    for (int i = 0; i < length; ++i) source += alphabet[rng() % alphabet.size()];
    auto tokens = TokenizePython(source);
    ASSERT_FALSE(tokens.empty());
    EXPECT_EQ(tokens.back().kind, K::kEnd);
    int lines = PyLineCount(source);
    for (const PyToken& t : tokens) {
      if (t.kind == K::kName || t.kind == K::kString || t.kind == K::kOp) {
        ASSERT_GE(t.line, 1) << source;
        ASSERT_LE(t.line, lines) << source;
      }
    }
  }
}

std::optional<std::string> ValueOf(std::string_view source) {
  auto tokens = TokenizePython(source);
  if (tokens.empty() || tokens[0].kind != K::kString) return "<not a string token>";
  return PyStringValue(tokens[0]);
}

TEST(PyStringValueTest, DecodesConstants) {
  EXPECT_EQ(ValueOf("'CUDA_VISIBLE_DEVICES'"), "CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(ValueOf("\"\"\"a\"b\"\"\""), "a\"b");
  EXPECT_EQ(ValueOf("'CUDA\\x5fVISIBLE'"), "CUDA_VISIBLE");
  EXPECT_EQ(ValueOf("r'a\\x5f'"), "a\\x5f");
  EXPECT_EQ(ValueOf("'it\\'s\\n'"), "it's\n");
  EXPECT_EQ(ValueOf("''"), "");
  EXPECT_EQ(ValueOf("''''''"), "");
  EXPECT_EQ(ValueOf("f'A_{{B}}'"), "A_{B}");
  EXPECT_EQ(ValueOf("b'x'"), "x");
}

TEST(PyStringValueTest, NoValueForFieldsOrUnterminated) {
  EXPECT_EQ(ValueOf("f'A_{b}'"), std::nullopt);
  EXPECT_EQ(ValueOf("'abc"), std::nullopt);
  EXPECT_EQ(ValueOf("'''ab''"), std::nullopt);
  EXPECT_EQ(ValueOf("'ab\\'"), std::nullopt);
}

TEST(PyLineCountTest, CountsLikeAnEditor) {
  EXPECT_EQ(PyLineCount(""), 1);
  EXPECT_EQ(PyLineCount("a"), 1);
  EXPECT_EQ(PyLineCount("a\n"), 1);
  EXPECT_EQ(PyLineCount("a\nb"), 2);
  EXPECT_EQ(PyLineCount("a\r\nb\rc\n"), 3);
  EXPECT_EQ(PyLineCount("\n\n"), 2);
}

}  // namespace
}  // namespace gpupin
