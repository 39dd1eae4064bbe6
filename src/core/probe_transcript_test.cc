#include "core/probe_transcript.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <string>

namespace gpupin {
namespace {

constexpr std::chrono::milliseconds kTimeout{5000};

// A wait status as waitpid reports a normal exit with `code`.
int Exited(int code) { return code << 8; }

ProbeTranscript Said(std::string_view text, int wait_status = Exited(0)) {
  ProbeTranscript transcript;
  transcript.Append(text);
  transcript.SetWaitStatus(wait_status);
  return transcript;
}

TEST(ProbeTranscriptTest, AFullAnswerListsTheDevices) {
  ProbeResult result = Said(R"({"event":"loaded"}
{"event":"initialised"}
{"event":"driver_version","value":12040}
{"event":"count","value":2}
{"event":"device","ordinal":0,"uuid":"GPU-a","pci_bus_id":"0000:01:00.0","name":"H100"}
{"event":"device","ordinal":1,"errors":["cuDeviceGetUuid: CUDA error 999"]}
{"event":"done"}
)")
                           .Interpret(kTimeout);
  EXPECT_EQ(result.status, ProbeStatus::kOk);
  EXPECT_EQ(result.driver_version, 12040);
  ASSERT_EQ(result.devices.size(), 2u);
  EXPECT_EQ(result.devices[0].uuid, "GPU-a");
  EXPECT_EQ(result.devices[0].name, "H100");
  EXPECT_EQ(result.devices[1].ordinal, 1);
  EXPECT_EQ(result.devices[1].uuid, std::nullopt);
  EXPECT_EQ(result.devices[1].errors.size(), 1u);
}

TEST(ProbeTranscriptTest, LinesMayArriveInPieces) {
  ProbeTranscript transcript;
  for (char c : std::string(R"({"event":"device","ordinal":3,"uuid":"GPU-b"})"
                            "\n"
                            R"({"event":"done"})"
                            "\n"))
    transcript.Append(std::string_view(&c, 1));
  ProbeResult result = transcript.Interpret(kTimeout);
  EXPECT_EQ(result.status, ProbeStatus::kOk);
  ASSERT_EQ(result.devices.size(), 1u);
  EXPECT_EQ(result.devices[0].ordinal, 3);
}

TEST(ProbeTranscriptTest, CuInitNoDeviceIsARealAnswerOtherErrorsAreFailures) {
  ProbeResult none = Said(R"({"event":"loaded"}
{"event":"error","call":"cuInit","result":100})"
                          "\n")
                         .Interpret(kTimeout);
  EXPECT_EQ(none.status, ProbeStatus::kNoDevice);
  EXPECT_EQ(none.cuda_error, 100);
  ProbeResult failed =
      Said(R"({"event":"error","call":"cuDeviceGetCount","result":12345,"name":"CUDA_ERROR_X"})"
           "\n")
          .Interpret(kTimeout);
  EXPECT_EQ(failed.status, ProbeStatus::kInitFailed);
  EXPECT_EQ(failed.detail, "cuDeviceGetCount: CUDA_ERROR_X (12345)");
}

TEST(ProbeTranscriptTest, AnAnswerWithoutDoneSaysHowAndWhereTheProbeEnded) {
  ProbeResult killed = Said(R"({"event":"loaded"})"
                            "\n",
                            SIGSEGV)
                           .Interpret(kTimeout);
  EXPECT_EQ(killed.status, ProbeStatus::kCrashed);
  EXPECT_EQ(killed.detail, "the probe process died of signal 11 in cuInit");

  ProbeTranscript hung;
  hung.Append(R"({"event":"initialised"})"
              "\n");
  hung.MarkTimedOut();
  hung.SetWaitStatus(SIGKILL);
  ProbeResult result = hung.Interpret(kTimeout);
  EXPECT_EQ(result.status, ProbeStatus::kTimedOut);
  EXPECT_EQ(result.detail,
            "the CUDA driver did not answer within 5000 ms (stuck in cuDeviceGetCount); the "
            "probe process was killed");
}

// What a driver scribbling on the pipe could send: fields of the wrong type,
// missing fields, numbers out of range, lines that are not objects. Each
// reads as absent; nothing throws.
TEST(ProbeTranscriptTest, FieldsOfTheWrongShapeReadAsAbsent) {
  ProbeResult result = Said(R"([1,2]
"loaded"
not json at all
{"event":5}
{"event":"driver_version"}
{"event":"driver_version","value":"12040"}
{"event":"driver_version","value":99999999999}
{"event":"device","ordinal":"zero","uuid":7,"name":null,"errors":"oops"}
{"event":"device","ordinal":-99999999999,"errors":[1,"kept",{}]}
{"event":"done"}
)")
                           .Interpret(kTimeout);
  EXPECT_EQ(result.status, ProbeStatus::kOk);
  EXPECT_EQ(result.driver_version, std::nullopt);
  ASSERT_EQ(result.devices.size(), 2u);
  EXPECT_EQ(result.devices[0].ordinal, 0);
  EXPECT_EQ(result.devices[0].uuid, std::nullopt);
  EXPECT_EQ(result.devices[0].name, std::nullopt);
  EXPECT_TRUE(result.devices[0].errors.empty());
  EXPECT_EQ(result.devices[1].ordinal, 1);
  EXPECT_EQ(result.devices[1].errors, std::vector<std::string>{"kept"});

  ProbeResult odd_error = Said(R"({"event":"error","call":1,"result":"100","name":[]})"
                               "\n")
                              .Interpret(kTimeout);
  EXPECT_EQ(odd_error.status, ProbeStatus::kInitFailed);
  EXPECT_EQ(odd_error.cuda_error, -1);
  EXPECT_EQ(odd_error.detail.rfind("?: ", 0), 0u) << odd_error.detail;

  for (const char* line : {R"({"event":"unavailable","detail":{}})"
                           "\n",
                           R"({"event":"unavailable","detail":""})"
                           "\n"}) {
    ProbeResult odd_unavailable = Said(line).Interpret(kTimeout);
    EXPECT_EQ(odd_unavailable.status, ProbeStatus::kUnavailable);
    EXPECT_EQ(odd_unavailable.detail, "libcuda could not be loaded") << line;
  }
}

TEST(ProbeTranscriptTest, AnOverlongLineIsDroppedAndTheNextOneRead) {
  ProbeTranscript transcript;
  std::string flood = R"({"event":"device","name":")" + std::string(ProbeTranscript::kMaxLine, 'x');
  transcript.Append(flood);
  transcript.Append(flood);
  transcript.Append(R"("})"
                    "\n"
                    R"({"event":"done"})"
                    "\n");
  ProbeResult result = transcript.Interpret(kTimeout);
  EXPECT_EQ(result.status, ProbeStatus::kOk);
  EXPECT_TRUE(result.devices.empty());
}

}  // namespace
}  // namespace gpupin
