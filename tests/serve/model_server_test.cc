// relay-vm serve's server (serve/model_server.h) on loopback: every
// endpoint, every bad request (the server answering after each), concurrent
// clients with and without dynamic batching, results checked against a
// softmax and a sum computed here, and stopping with requests in flight.
#include "serve/model_server.h"
#include "tests/serve/serve_test_support.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <cmath>
#include <cstring>
#include <future>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

namespace relay::serve {
namespace {

using nlohmann::json;

using test_support::Fixture;
using test_support::Named;
using test_support::RunningServer;

json RowsRequest(const std::vector<float>& values) {
  return {{"inputs",
           {{{"name", "x"},
             {"shape", {static_cast<int64_t>(values.size() / 4), 4}},
             {"datatype", "FP32"},
             {"data", values}}}}};
}

// rows.relay's outputs computed here: each row's softmax, and its sum.
void ExpectRowsResults(const std::vector<float>& values, const json& response) {
  ASSERT_EQ(response["outputs"].size(), 2u) << response;
  const json& softmax = response["outputs"][0];
  const json& sums = response["outputs"][1];
  size_t rows = values.size() / 4;
  EXPECT_EQ(softmax["name"], "out0");
  EXPECT_EQ(softmax["shape"], json({rows, 4}));
  EXPECT_EQ(sums["shape"], json({rows}));
  for (size_t row = 0; row < rows; ++row) {
    double largest = *std::max_element(values.begin() + 4 * row, values.begin() + 4 * row + 4);
    double total = 0;
    double sum = 0;
    for (size_t column = 0; column < 4; ++column) {
      total += std::exp(values[4 * row + column] - largest);
      sum += values[4 * row + column];
    }
    for (size_t column = 0; column < 4; ++column) {
      EXPECT_NEAR(softmax["data"][4 * row + column].get<double>(),
                  std::exp(values[4 * row + column] - largest) / total, 1e-6);
    }
    EXPECT_NEAR(sums["data"][row].get<double>(), sum, 1e-5);
  }
}

std::vector<float> RandomRows(std::mt19937& random, size_t rows) {
  std::uniform_real_distribution<float> value(-3, 3);
  std::vector<float> values(rows * 4);
  for (float& each : values) each = value(random);
  return values;
}

TEST(ModelServer, AnswersEveryEndpoint) {
  RunningServer running("rows.relay", Named("rows"));
  httplib::Client client = running.Client();
  auto get = [&](const std::string& path, int status) {
    httplib::Result result = client.Get(path);
    EXPECT_TRUE(result) << path;
    if (!result) return json();
    EXPECT_EQ(result->status, status) << path << ": " << result->body;
    EXPECT_EQ(result->get_header_value("Content-Type"), "application/json") << path;
    return json::parse(result->body);
  };
  EXPECT_EQ(get("/v2/health/live", 200), json({{"live", true}}));
  EXPECT_EQ(get("/v2/health/ready", 200), json({{"ready", true}}));
  EXPECT_EQ(get("/v2", 200)["name"], "relay-vm");
  json metadata = get("/v2/models/rows", 200);
  EXPECT_EQ(metadata["name"], "rows");
  EXPECT_EQ(metadata["inputs"], json::parse(R"([{"name":"x","datatype":"FP32","shape":[-1,4]}])"));
  EXPECT_EQ(metadata["outputs"], json::parse(R"([{"name":"out0","datatype":"FP32","shape":[-1,4]},
                            {"name":"out1","datatype":"FP32","shape":[-1]}])"));
  EXPECT_EQ(get("/v2/models/rows/versions/1", 200), metadata);
  EXPECT_EQ(get("/v2/models/rows/ready", 200), json({{"name", "rows"}, {"ready", true}}));
  EXPECT_NE(get("/v2/models/other", 404)["error"].get<std::string>().find("unknown model 'other'"),
            std::string::npos);
  EXPECT_NE(
      get("/v2/models/rows/versions/2/ready", 404)["error"].get<std::string>().find("version"),
      std::string::npos);
  EXPECT_EQ(get("/v2/nothing", 404)["error"], "no endpoint GET /v2/nothing");

  std::vector<float> values = {0, 1, 2, 3, -1, -1, 5, 0.5f};
  httplib::Result infer =
      client.Post("/v2/models/rows/infer", RowsRequest(values).dump(), "application/json");
  ASSERT_TRUE(infer);
  ASSERT_EQ(infer->status, 200) << infer->body;
  json response = json::parse(infer->body);
  EXPECT_EQ(response["model_name"], "rows");
  ExpectRowsResults(values, response);
  httplib::Result versioned = client.Post("/v2/models/rows/versions/1/infer",
                                          RowsRequest(values).dump(), "application/json");
  ASSERT_TRUE(versioned);
  EXPECT_EQ(json::parse(versioned->body)["outputs"], response["outputs"]);

  // Whatever the content type: curl -d sends JSON as a form, which httplib
  // would parse as one (and refuse over 8 KiB) if the server let it.
  std::mt19937 random(3);
  std::vector<float> many = RandomRows(random, 700);
  httplib::Result as_form = client.Post("/v2/models/rows/infer", RowsRequest(many).dump(),
                                        "application/x-www-form-urlencoded");
  ASSERT_TRUE(as_form);
  ASSERT_EQ(as_form->status, 200) << as_form->body;
  ExpectRowsResults(many, json::parse(as_form->body));

  httplib::Result metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_NE(metrics->body.find("relay_serve_requests_total{model=\"rows\"} 3\n"), std::string::npos)
      << metrics->body;
  EXPECT_NE(metrics->body.find("relay_serve_request_duration_seconds_count{model=\"rows\"} 3\n"),
            std::string::npos);
  EXPECT_NE(metrics->body.find("relay_serve_queue_length{model=\"rows\"} 0\n"), std::string::npos);
  EXPECT_NE(metrics->body.find("# TYPE relay_serve_request_duration_seconds histogram"),
            std::string::npos);
}

TEST(ModelServer, AnswersBadRequestsWithAnErrorAndGoesOn) {
  ServerOptions options = Named("rows");
  options.http.max_body_bytes = 4096;
  RunningServer running("rows.relay", options);
  httplib::Client client = running.Client();
  const std::vector<std::tuple<std::string, std::string, int>> cases = {
      {"/v2/models/rows/infer", "{\"inputs\": [", 400},
      {"/v2/models/rows/infer", "\xff\xfe", 400},
      {"/v2/models/rows/infer",
       R"({"inputs": [{"name": "y", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]})",
       400},
      {"/v2/models/rows/infer",
       R"({"inputs": [{"name": "x", "shape": [1, 5], "datatype": "FP32", "data": [1, 2, 3, 4, 5]}]})",
       400},
      {"/v2/models/rows/infer",
       R"({"inputs": [{"name": "x", "shape": [1, 4], "datatype": "INT32", "data": [1, 2, 3, 4]}]})",
       400},
      {"/v2/models/rows/infer",
       R"({"inputs": [{"name": "x", "shape": [2, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]})",
       400},
      {"/v2/models/rows/infer", R"({"inputs": []})", 400},
      {"/v2/models/nope/infer", RowsRequest({1, 2, 3, 4}).dump(), 404},
      {"/v2/models/rows/infer", RowsRequest(std::vector<float>(2000, 1.0f)).dump(), 413},
      {"/v2/models/rows/infr", RowsRequest({1, 2, 3, 4}).dump(), 404},
  };
  for (const auto& [path, body, status] : cases) {
    httplib::Result result = client.Post(path, body, "application/json");
    ASSERT_TRUE(result) << path << " " << body.substr(0, 80);
    EXPECT_EQ(result->status, status) << body.substr(0, 80) << "\n" << result->body;
    json answer = json::parse(result->body, nullptr, false);
    ASSERT_TRUE(answer.is_object()) << result->body;
    EXPECT_FALSE(answer["error"].get<std::string>().empty()) << result->body;
    httplib::Result live = running.Client().Get("/v2/health/live");
    ASSERT_TRUE(live) << "no answer after " << body.substr(0, 80);
    EXPECT_EQ(live->status, 200);
  }
  // A body over the limit sent in chunks (no Content-Length to refuse it by).
  httplib::Result chunked = client.Post(
      "/v2/models/rows/infer",
      [](size_t offset, httplib::DataSink& sink) {
        std::string piece(1000, ' ');
        if (offset < 10000) {
          sink.write(piece.data(), piece.size());
        } else {
          sink.done();
        }
        return true;
      },
      "application/json");
  ASSERT_TRUE(chunked);
  EXPECT_EQ(chunked->status, 413) << chunked->body;
  httplib::Result multipart = running.Client().Post(
      "/v2/models/rows/infer", httplib::MultipartFormDataItems{{"inputs", "[]", "", ""}});
  ASSERT_TRUE(multipart);
  EXPECT_EQ(multipart->status, 400) << multipart->body;
  httplib::Result live = running.Client().Get("/v2/health/live");
  ASSERT_TRUE(live);
  EXPECT_EQ(live->status, 200);

  httplib::Result metrics = running.Client().Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(
      metrics->body.find("relay_serve_request_failures_total{model=\"rows\",code=\"400\"} 8\n"),
      std::string::npos)
      << metrics->body;
}

// As Triton's clients send by default: the inputs' bytes after the JSON,
// and the outputs' bytes back.
TEST(ModelServer, TakesAndAnswersBinaryTensorData) {
  RunningServer running("rows.relay", Named("rows"));
  std::vector<float> values = {0.5f, -1, 2, 0, 3, 3, -2, 1};
  json header = {
      {"inputs",
       {{{"name", "x"},
         {"shape", {2, 4}},
         {"datatype", "FP32"},
         {"parameters", {{"binary_data_size", 32}}}}}},
      {"outputs",
       {{{"name", "out1"}, {"parameters", {{"binary_data", true}}}}, {{"name", "out0"}}}}};
  std::string text = header.dump();
  std::string body = text + std::string(reinterpret_cast<const char*>(values.data()), 32);
  httplib::Headers headers = {{"Inference-Header-Content-Length", std::to_string(text.size())}};
  httplib::Result result =
      running.Client().Post("/v2/models/rows/infer", headers, body, "application/octet-stream");
  ASSERT_TRUE(result);
  ASSERT_EQ(result->status, 200) << result->body;
  size_t json_length = std::stoul(result->get_header_value("Inference-Header-Content-Length"));
  json head = json::parse(result->body.substr(0, json_length));
  ASSERT_EQ(result->body.size(), json_length + 8);
  float sums[2];
  std::memcpy(sums, result->body.data() + json_length, sizeof sums);
  // Back in the JSON order of the earlier checks: out0 then out1.
  json outputs = {head["outputs"][1], head["outputs"][0]};
  outputs[1]["data"] = {sums[0], sums[1]};
  ExpectRowsResults(values, json{{"outputs", outputs}});

  headers = {{"Inference-Header-Content-Length", "many"}};
  httplib::Result bad =
      running.Client().Post("/v2/models/rows/infer", headers, body, "application/octet-stream");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400) << bad->body;
}

TEST(ModelServer, AnswersARuntimeErrorWith500AndGoesOn) {
  RunningServer running("reshape_two.relay", Named("reshape_two"));
  httplib::Client client = running.Client();
  auto infer = [&](std::vector<float> values) {
    json body = {
        {"inputs",
         {{{"name", "x"}, {"shape", {values.size()}}, {"datatype", "FP32"}, {"data", values}}}}};
    return client.Post("/v2/models/reshape_two/infer", body.dump(), "application/json");
  };
  httplib::Result failed = infer({1, 2, 3});
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->status, 500);
  EXPECT_NE(json::parse(failed->body)["error"].get<std::string>().find("reshape"),
            std::string::npos)
      << failed->body;
  httplib::Result succeeded = infer({1, 2});
  ASSERT_TRUE(succeeded);
  EXPECT_EQ(succeeded->status, 200);
  EXPECT_EQ(json::parse(succeeded->body)["outputs"][0]["data"], json({1.0, 2.0}));
}

TEST(ModelServer, RefusesModelsTheProtocolCannotCarry) {
  Executable spin = Executable::Load(Fixture("spin.relay"));
  ServerOptions batching = Named("spin");
  batching.workers.max_batch = 4;
  try {
    ModelServer server(spin, batching);
    ADD_FAILURE() << "batching a model without a leading ? dimension";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("cannot be batched"), std::string::npos);
  }
  Executable program = Executable::Load(std::string(RELAY_TEST_FIXTURE_DIR) + "/api/program.relay");
  EXPECT_NO_THROW(ModelServer(program, Named("program")));
}

// `clients` threads each send `requests` requests of 1 to 3 random rows and
// check every answer.
void RunConcurrentClients(RunningServer& running, int clients, int requests) {
  std::vector<std::thread> threads;
  std::atomic<int> answered{0};
  for (int client_index = 0; client_index < clients; ++client_index) {
    threads.emplace_back([&, client_index] {
      std::mt19937 random(client_index);
      httplib::Client client = running.Client();
      for (int request = 0; request < requests; ++request) {
        std::vector<float> values = RandomRows(random, 1 + (request + client_index) % 3);
        httplib::Result result =
            client.Post("/v2/models/rows/infer", RowsRequest(values).dump(), "application/json");
        ASSERT_TRUE(result) << httplib::to_string(result.error());
        ASSERT_EQ(result->status, 200) << result->body;
        ExpectRowsResults(values, json::parse(result->body));
        ++answered;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(answered.load(), clients * requests);
}

uint64_t Metric(RunningServer& running, const std::string& name) {
  httplib::Result metrics = running.Client().Get("/metrics");
  std::string key = name + "{model=\"rows\"} ";
  size_t at = metrics->body.find(key);
  return at == std::string::npos ? 0 : std::stoull(metrics->body.substr(at + key.size()));
}

TEST(ModelServer, ServesConcurrentClientsOnSeveralWorkers) {
  ServerOptions options = Named("rows");
  options.workers.workers = 3;
  RunningServer running("rows.relay", options);
  RunConcurrentClients(running, 12, 40);
  EXPECT_EQ(Metric(running, "relay_serve_model_runs_total"), 480u);
  EXPECT_EQ(Metric(running, "relay_serve_batched_runs_total"), 0u);
}

TEST(ModelServer, BatchesConcurrentRequestsAndSplitsTheirRows) {
  ServerOptions options = Named("rows");
  options.workers.workers = 2;
  options.workers.max_batch = 8;
  options.workers.batch_timeout = std::chrono::microseconds(2000);
  RunningServer running("rows.relay", options);
  RunConcurrentClients(running, 16, 30);
  EXPECT_GT(Metric(running, "relay_serve_batched_runs_total"), 0u);
  EXPECT_LT(Metric(running, "relay_serve_model_runs_total"), 480u);
  EXPECT_EQ(Metric(running, "relay_serve_requests_total"), 480u);
}

TEST(ModelServer, RunsRequestsAloneWhenTheModelMixesRows) {
  ServerOptions options = Named("doubled_rows");
  options.workers.max_batch = 16;
  options.workers.batch_timeout = std::chrono::microseconds(5000);
  RunningServer running("doubled_rows.relay", options);
  std::vector<std::thread> threads;
  for (int client_index = 0; client_index < 8; ++client_index) {
    threads.emplace_back([&, client_index] {
      std::mt19937 random(client_index);
      httplib::Client client = running.Client();
      for (int request = 0; request < 10; ++request) {
        std::vector<float> values = RandomRows(random, 1 + request % 2);
        httplib::Result result = client.Post("/v2/models/doubled_rows/infer",
                                             RowsRequest(values).dump(), "application/json");
        ASSERT_TRUE(result);
        ASSERT_EQ(result->status, 200) << result->body;
        json output = json::parse(result->body)["outputs"][0];
        std::vector<float> doubled = values;
        doubled.insert(doubled.end(), values.begin(), values.end());
        EXPECT_EQ(output["data"].get<std::vector<float>>(), doubled);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
}

TEST(ModelServer, StoppingAnswersEveryRequestInFlight) {
  ServerOptions options = Named("spin");
  options.workers.workers = 2;
  options.shutdown_timeout = std::chrono::seconds(120);
  RunningServer running("spin.relay", options);
  constexpr int kRequests = 6;
  constexpr int kSteps = 1'000'000;
  std::vector<std::future<httplib::Result>> answers;
  for (int index = 0; index < kRequests; ++index) {
    answers.push_back(std::async(std::launch::async, [&running, index] {
      json body = {{"inputs",
                    {{{"name", "n"},
                      {"shape", json::array()},
                      {"datatype", "INT32"},
                      {"data", {kSteps + index}}}}}};
      return running.Client().Post("/v2/models/spin/infer", body.dump(), "application/json");
    }));
  }
  // Stop once every request has arrived (each is queued or running).
  for (int wait = 0; wait < 2000; ++wait) {
    httplib::Result metrics = running.Client().Get("/metrics");
    if (metrics && metrics->body.find("relay_serve_inflight_requests{model=\"spin\"} 6\n") !=
                       std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  running.server().Stop();
  for (int index = 0; index < kRequests; ++index) {
    httplib::Result result = answers[index].get();
    ASSERT_TRUE(result) << "request " << index << " lost";
    EXPECT_EQ(result->status, 200) << result->body;
    EXPECT_EQ(json::parse(result->body)["outputs"][0]["data"], json({kSteps + index}));
  }
  EXPECT_EQ(running.serving().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  // The listening socket is closed.
  EXPECT_FALSE(running.Client().Get("/v2/health/live"));
}

}  // namespace
}  // namespace relay::serve
