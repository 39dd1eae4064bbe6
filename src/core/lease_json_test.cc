#include "core/lease_json.h"

#include <gtest/gtest.h>

#include "core/queue_ticket.h"

namespace gpupin {
namespace {

Lease FullLease() {
  Lease lease;
  lease.id = "4121-998877-0a1b2c3d";
  lease.gpu_uuids = {"GPU-1111", "GPU-2222"};
  lease.holder = {4121, 998877};
  lease.uid = 1000;
  lease.user = "alice";
  lease.command = "python train.py --lr \"0.1\"";
  lease.created_unix_ms = 1700000000123;
  lease.shared_bytes = 24ull << 30;
  lease.reservation_deadline_unix_ms = 1700000060123;
  lease.reservation_baseline_pids = {1, 4294967295u};
  lease.container_id = std::string(64, 'f');
  lease.holder_session = 4100;
  lease.holder_start_stack = 0x7ffc12345670;
  return lease;
}

void ExpectSame(const Lease& a, const Lease& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.gpu_uuids, b.gpu_uuids);
  EXPECT_EQ(a.holder, b.holder);
  EXPECT_EQ(a.uid, b.uid);
  EXPECT_EQ(a.user, b.user);
  EXPECT_EQ(a.command, b.command);
  EXPECT_EQ(a.created_unix_ms, b.created_unix_ms);
  EXPECT_EQ(a.shared_bytes, b.shared_bytes);
  EXPECT_EQ(a.reservation_deadline_unix_ms, b.reservation_deadline_unix_ms);
  EXPECT_EQ(a.reservation_baseline_pids, b.reservation_baseline_pids);
  EXPECT_EQ(a.container_id, b.container_id);
  EXPECT_EQ(a.holder_session, b.holder_session);
  EXPECT_EQ(a.holder_start_stack, b.holder_start_stack);
}

TEST(LeaseJson, RoundTripsEveryField) {
  Result<Lease> back = LeaseFromJson(LeaseToJson(FullLease()));
  ASSERT_TRUE(back.ok()) << back.error().message;
  ExpectSame(*back, FullLease());
}

TEST(LeaseJson, RoundTripsAnExclusiveLeaseWithoutOptionals) {
  Lease lease = FullLease();
  lease.shared_bytes.reset();
  lease.reservation_deadline_unix_ms.reset();
  lease.reservation_baseline_pids.clear();
  lease.container_id.reset();
  lease.holder_session.reset();
  lease.holder_start_stack.reset();
  Result<Lease> back = LeaseFromJson(LeaseToJson(lease));
  ASSERT_TRUE(back.ok()) << back.error().message;
  ExpectSame(*back, lease);
  EXPECT_TRUE(back->exclusive());
  EXPECT_FALSE(back->is_reservation());
}

TEST(LeaseJson, OptionalFieldsMayBeAbsent) {
  nlohmann::json json = nlohmann::json::parse(LeaseToJson(FullLease()));
  json.erase("shared_bytes");
  json.erase("container_id");
  json.erase("holder_session");  // as older gpupins wrote reservations
  json.erase("holder_start_stack");
  Result<Lease> back = LeaseFromJson(json.dump());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_FALSE(back->shared_bytes.has_value());
  EXPECT_FALSE(back->container_id.has_value());
  EXPECT_FALSE(back->holder_session.has_value());
}

// Each mutation of a valid lease file and a piece of the message it must give.
struct Rejection {
  std::string name;
  std::function<void(nlohmann::json&)> mutate;
  std::string message;
};

class LeaseJsonRejects : public ::testing::TestWithParam<Rejection> {};

TEST_P(LeaseJsonRejects, WithAMessage) {
  nlohmann::json json = nlohmann::json::parse(LeaseToJson(FullLease()));
  GetParam().mutate(json);
  Result<Lease> lease = LeaseFromJson(json.dump());
  ASSERT_FALSE(lease.ok());
  EXPECT_NE(lease.error().message.find(GetParam().message), std::string::npos)
      << lease.error().message;
}

INSTANTIATE_TEST_SUITE_P(
    LeaseFields, LeaseJsonRejects,
    ::testing::Values(
        Rejection{"NoVersion", [](auto& j) { j.erase("format_version"); }, "no format_version"},
        Rejection{"FutureVersion", [](auto& j) { j["format_version"] = 2; }, "format_version 2"},
        Rejection{"VersionAsText", [](auto& j) { j["format_version"] = "1"; }, "format_version"},
        Rejection{"NoId", [](auto& j) { j.erase("id"); }, "'id' is missing"},
        Rejection{"IdWithSlash", [](auto& j) { j["id"] = "../x"; }, "'id' must be"},
        Rejection{"IdNumber", [](auto& j) { j["id"] = 5; }, "'id' must be a string"},
        Rejection{"NoGpus", [](auto& j) { j["gpu_uuids"] = nlohmann::json::array(); },
                  "names no GPU"},
        Rejection{"GpuNotString",
                  [](auto& j) {
                    j["gpu_uuids"] = {"GPU-1", 2};
                  },
                  "array of strings"},
        Rejection{"HolderMissing", [](auto& j) { j.erase("holder"); }, "'holder' is missing"},
        Rejection{"HolderNotObject", [](auto& j) { j["holder"] = 5; }, "must be an object"},
        Rejection{"PidZero", [](auto& j) { j["holder"]["pid"] = 0; }, "holder.pid"},
        Rejection{"PidNegative", [](auto& j) { j["holder"]["pid"] = -4; }, "holder.pid"},
        Rejection{"PidHuge", [](auto& j) { j["holder"]["pid"] = 1ll << 40; }, "holder.pid"},
        Rejection{"StartFloat", [](auto& j) { j["holder"]["start_time_ticks"] = 1.5; },
                  "holder.start_time_ticks"},
        Rejection{"UidTooBig", [](auto& j) { j["uid"] = 1ll << 32; }, "'uid'"},
        Rejection{"UserNull", [](auto& j) { j["user"] = nullptr; }, "'user'"},
        Rejection{"CommandMissing", [](auto& j) { j.erase("command"); }, "'command'"},
        Rejection{"CreatedText", [](auto& j) { j["created_unix_ms"] = "now"; },
                  "'created_unix_ms'"},
        Rejection{"CreatedTooBig", [](auto& j) { j["created_unix_ms"] = UINT64_MAX; },
                  "'created_unix_ms'"},
        Rejection{"SharedNegative", [](auto& j) { j["shared_bytes"] = -1; }, "'shared_bytes'"},
        Rejection{"DeadlineText", [](auto& j) { j["reservation_deadline_unix_ms"] = "x"; },
                  "'reservation_deadline_unix_ms'"},
        Rejection{"BaselineTooBig", [](auto& j) { j["reservation_baseline_pids"] = {1ll << 33}; },
                  "'reservation_baseline_pids'"},
        Rejection{"BaselineMissing", [](auto& j) { j.erase("reservation_baseline_pids"); },
                  "'reservation_baseline_pids' is missing"},
        Rejection{"SessionNegative", [](auto& j) { j["holder_session"] = -1; }, "'holder_session'"},
        Rejection{"SessionHuge", [](auto& j) { j["holder_session"] = 1ll << 31; },
                  "'holder_session'"},
        Rejection{"StartStackText", [](auto& j) { j["holder_start_stack"] = "0x7f"; },
                  "'holder_start_stack'"},
        Rejection{"ContainerNumber", [](auto& j) { j["container_id"] = 7; }, "'container_id'"},
        Rejection{"ContainerOption", [](auto& j) { j["container_id"] = "-f"; },
                  "'container_id' is not a docker container id"},
        Rejection{"UuidHuge", [](auto& j) { j["gpu_uuids"] = {std::string(60000, 'x')}; },
                  "'gpu_uuids' holds something that is not a GPU UUID"},
        Rejection{"UuidWithSpace", [](auto& j) { j["gpu_uuids"] = {"GPU-1 2"}; },
                  "not a GPU UUID"}),
    [](const auto& param_info) { return param_info.param.name; });

TEST(LeaseJson, RejectsTextThatIsNotALease) {
  for (std::string_view text :
       {"", "{", "[]", "null", "42", "\"lease\"", "{\"format_version\":1"}) {
    Result<Lease> lease = LeaseFromJson(text);
    ASSERT_FALSE(lease.ok()) << text;
    EXPECT_EQ(lease.error().message.find('\n'), std::string::npos);
  }
}

TEST(LeaseJson, RejectsEveryTruncation) {
  std::string text = LeaseToJson(FullLease());
  // The trailing newline is not part of the object.
  for (size_t length = 0; length + 1 < text.size(); ++length) {
    EXPECT_FALSE(LeaseFromJson(text.substr(0, length)).ok()) << length;
  }
}

TEST(TicketJson, RoundTrips) {
  QueueTicket ticket{"t-1", 42, {77, 123}, 1000, "bob", "python x.py", "1 GPU, exclusive", 55};
  Result<QueueTicket> back = TicketFromJson(TicketToJson(ticket));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->id, ticket.id);
  EXPECT_EQ(back->seq, ticket.seq);
  EXPECT_EQ(back->holder, ticket.holder);
  EXPECT_EQ(back->uid, ticket.uid);
  EXPECT_EQ(back->user, ticket.user);
  EXPECT_EQ(back->command, ticket.command);
  EXPECT_EQ(back->request, ticket.request);
  EXPECT_EQ(back->created_unix_ms, ticket.created_unix_ms);
}

TEST(TicketJson, WaiterIsOptionalAndRoundTrips) {
  QueueTicket ticket{"t-1", 42, {77, 123}, 1000, "bob", "python x.py", "1 GPU", 55};
  ticket.waiter = ProcessIdentity{78, 124};
  Result<QueueTicket> back = TicketFromJson(TicketToJson(ticket));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, ticket);

  nlohmann::json older = nlohmann::json::parse(TicketToJson(ticket));
  older.erase("waiter");
  back = TicketFromJson(older.dump());
  ASSERT_TRUE(back.ok()) << "a ticket of an older gpupin: " << back.error().message;
  EXPECT_FALSE(back->waiter.has_value());

  older["waiter"] = {{"pid", 0}, {"start_time_ticks", 1}};
  back = TicketFromJson(older.dump());
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.error().message.find("waiter"), std::string::npos) << back.error().message;
}

TEST(TicketJson, RejectsACountOfNoCard) {
  QueueTicket ticket{"t-1", 1, {77, 123}, 1000, "bob", "x", "y", 55};
  nlohmann::json json = nlohmann::json::parse(TicketToJson(ticket));
  json["count"] = 0;
  Result<QueueTicket> back = TicketFromJson(json.dump());
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.error().message.find("'count'"), std::string::npos) << back.error().message;
  json["count"] = 2;
  EXPECT_TRUE(TicketFromJson(json.dump()).ok());
}

TEST(TicketJson, RejectsSequenceBeyondExactRange) {
  QueueTicket ticket{"t-1", 1, {77, 123}, 1000, "bob", "x", "y", 55};
  nlohmann::json json = nlohmann::json::parse(TicketToJson(ticket));
  json["seq"] = kMaxTicketSeq + 1;
  Result<QueueTicket> back = TicketFromJson(json.dump());
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.error().message.find("'seq'"), std::string::npos) << back.error().message;
  json["seq"] = 1;
  json["format_version"] = 9;
  EXPECT_FALSE(TicketFromJson(json.dump()).ok());
}

}  // namespace
}  // namespace gpupin
