// kiln-serve: serves compiled Kiln artifacts over HTTP with the KServe v2 /
// Open Inference Protocol (REST), so that KServe and Triton clients work
// unchanged. Links only the runtime, cpp-httplib and nlohmann-json.
//
//   kiln-serve --model resnet=resnet.so [--model ...] --port 8000
//              [--host 127.0.0.1] [--sessions 2] [--threads-per-session 1]
//              [--queue 64] [--http-threads 8]
//
// GET  /v2/health/live, /v2/health/ready, /v2, /v2/models/NAME,
//      /v2/models/NAME/ready, /metrics (Prometheus text)
// POST /v2/models/NAME/infer (JSON tensors or the binary data extension)
//
// --max-batch N (with --batch-timeout-us T) batches requests to a model
// whose inputs share a symbolic leading dim: those arriving within T of the
// first are stacked along it (up to N rows), run once and split back.
//
// SIGTERM or SIGINT stops accepting connections and lets the requests in
// flight finish.
#include "kserve.h"
#include "model_pool.h"

#include <httplib.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <pthread.h>
#include <string>
#include <thread>

using namespace kiln::serve;
using nlohmann::json;

namespace {
struct Options {
  std::vector<std::pair<std::string, std::string>> models;
  std::string host = "127.0.0.1";
  int port = 8000;
  unsigned sessions = 2, threadsPerSession = 1, queue = 64, httpThreads = 8;
  unsigned maxBatch = 1, batchTimeoutUs = 500;
};

void usage(FILE *out) {
  std::fprintf(out,
               "usage: kiln-serve --model NAME=MODEL.so [--model ...] "
               "[--port 8000] [--host 127.0.0.1]\n"
               "                  [--sessions 2] [--threads-per-session 1] "
               "[--queue 64] [--http-threads 8]\n"
               "                  [--max-batch 1] [--batch-timeout-us 500]\n"
               "Serves Kiln artifacts with the KServe v2 protocol over "
               "HTTP.\n");
}

bool parseUnsigned(const char *text, unsigned &out, unsigned min) {
  char *end = nullptr;
  unsigned long v = std::strtoul(text, &end, 10);
  if (!*text || *end || v < min || v > 1u << 20)
    return false;
  out = static_cast<unsigned>(v);
  return true;
}

/// Parses argv; exits with a message on a bad flag.
Options parse(int argc, char **argv) {
  Options o;
  auto fail = [](const std::string &message) {
    std::fprintf(stderr, "error: %s\n", message.c_str());
    std::exit(2);
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 >= argc)
        fail(arg + " needs a value");
      return argv[++i];
    };
    unsigned n = 0;
    if (arg == "--help" || arg == "-h") {
      usage(stdout);
      std::exit(0);
    } else if (arg == "--model") {
      std::string spec = value();
      size_t eq = spec.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
        fail("--model takes NAME=PATH, got '" + spec + "'");
      o.models.emplace_back(spec.substr(0, eq), spec.substr(eq + 1));
    } else if (arg == "--host") {
      o.host = value();
    } else if (arg == "--port") {
      if (!parseUnsigned(value(), n, 0) || n > 65535)
        fail("--port takes a number from 0 to 65535");
      o.port = static_cast<int>(n);
    } else if (arg == "--sessions") {
      if (!parseUnsigned(value(), o.sessions, 1))
        fail("--sessions takes a positive number");
    } else if (arg == "--threads-per-session") {
      if (!parseUnsigned(value(), o.threadsPerSession, 1))
        fail("--threads-per-session takes a positive number");
    } else if (arg == "--queue") {
      if (!parseUnsigned(value(), o.queue, 0))
        fail("--queue takes a number");
    } else if (arg == "--max-batch") {
      if (!parseUnsigned(value(), o.maxBatch, 1))
        fail("--max-batch takes a positive number");
    } else if (arg == "--batch-timeout-us") {
      if (!parseUnsigned(value(), o.batchTimeoutUs, 0))
        fail("--batch-timeout-us takes a number");
    } else if (arg == "--http-threads") {
      if (!parseUnsigned(value(), o.httpThreads, 1))
        fail("--http-threads takes a positive number");
    } else {
      fail("unknown option '" + arg + "' (see --help)");
    }
  }
  if (o.models.empty())
    fail("give at least one --model NAME=MODEL.so");
  return o;
}

void sendError(httplib::Response &res, int status, const std::string &message) {
  res.status = status;
  res.set_content(json{{"error", message}}.dump(), "application/json");
}
} // namespace

int main(int argc, char **argv) {
  Options options = parse(argc, argv);
  // SIGTERM/SIGINT are taken by a thread that stops the server; blocked
  // before any thread (session pools, HTTP workers) starts, so all inherit.
  sigset_t stopSignals;
  sigemptyset(&stopSignals);
  sigaddset(&stopSignals, SIGTERM);
  sigaddset(&stopSignals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);

  std::map<std::string, std::unique_ptr<ModelPool>> models;
  std::map<std::string, std::unique_ptr<Batcher>> batchers;
  for (const auto &[name, path] : options.models) {
    if (models.count(name)) {
      std::fprintf(stderr, "error: model name '%s' is given twice\n",
                   name.c_str());
      return 2;
    }
    try {
      models[name] =
          std::make_unique<ModelPool>(name, path, options.sessions,
                                      options.threadsPerSession, options.queue);
    } catch (const std::exception &e) {
      std::fprintf(stderr, "error: model '%s': %s\n", name.c_str(), e.what());
      return 1;
    }
    if (options.maxBatch > 1) {
      if (!Batcher::batchable(models[name]->descriptor())) {
        std::fprintf(stderr,
                     "error: --max-batch: model '%s' cannot be batched (its "
                     "inputs need one symbolic leading dim, its outputs a "
                     "run-time one)\n",
                     name.c_str());
        return 2;
      }
      batchers[name] = std::make_unique<Batcher>(
          *models[name], options.sessions, options.maxBatch,
          std::chrono::microseconds(options.batchTimeoutUs), options.queue);
    }
  }

  httplib::Server server;
  // Idle keep-alive connections hold a worker; a short timeout bounds how
  // long a stop waits for them.
  server.set_keep_alive_timeout(2);
  unsigned httpThreads = options.httpThreads;
  server.new_task_queue = [httpThreads] {
    return new httplib::ThreadPool(httpThreads);
  };
  server.set_payload_max_length(size_t(1) << 31);
  auto modelOf = [&](const httplib::Request &req,
                     httplib::Response &res) -> ModelPool * {
    auto it = models.find(req.matches[1].str());
    if (it == models.end()) {
      sendError(res, 404, "unknown model '" + req.matches[1].str() + "'");
      return nullptr;
    }
    return it->second.get();
  };
  // Every model is loaded before the server listens: live means ready.
  server.Get("/v2/health/(live|ready)",
             [](const httplib::Request &, httplib::Response &res) {
               res.set_content("", "text/plain");
             });
  server.Get("/v2", [](const httplib::Request &, httplib::Response &res) {
    res.set_content(json{{"name", "kiln"},
                         {"version", KILN_SERVE_VERSION},
                         {"extensions", {"binary_tensor_data"}}}
                        .dump(),
                    "application/json");
  });
  server.Get(R"(/v2/models/([^/]+)(?:/versions/1)?)",
             [&](const httplib::Request &req, httplib::Response &res) {
               if (ModelPool *pool = modelOf(req, res))
                 res.set_content(modelMetadata(*pool).dump(),
                                 "application/json");
             });
  server.Get(R"(/v2/models/([^/]+)(?:/versions/1)?/ready)",
             [&](const httplib::Request &req, httplib::Response &res) {
               if (modelOf(req, res))
                 res.set_content("", "text/plain");
             });
  server.Post(
      R"(/v2/models/([^/]+)(?:/versions/1)?/infer)",
      [&](const httplib::Request &req, httplib::Response &res) {
        ModelPool *pool = modelOf(req, res);
        if (!pool)
          return;
        auto start = std::chrono::steady_clock::now();
        bool ok = false;
        try {
          std::optional<size_t> jsonLength;
          if (req.has_header("Inference-Header-Content-Length")) {
            std::string text =
                req.get_header_value("Inference-Header-Content-Length");
            char *end = nullptr;
            unsigned long long v = std::strtoull(text.c_str(), &end, 10);
            if (text.empty() || *end)
              throw HttpError(400, "Inference-Header-Content-Length '" + text +
                                       "' is not a number");
            jsonLength = static_cast<size_t>(v);
          }
          auto batcher = batchers.find(pool->name());
          InferResponse response =
              infer(*pool,
                    batcher == batchers.end() ? nullptr : batcher->second.get(),
                    req.body, jsonLength);
          if (response.jsonLength) {
            res.set_header("Inference-Header-Content-Length",
                           std::to_string(response.jsonLength));
            res.set_content(response.body, "application/octet-stream");
          } else {
            res.set_content(response.body, "application/json");
          }
          ok = true;
        } catch (const HttpError &e) {
          if (e.status == 503)
            res.set_header("Retry-After", "1");
          sendError(res, e.status, e.what());
        } catch (const std::exception &e) {
          sendError(res, 400, e.what());
        }
        std::chrono::duration<double> elapsed =
            std::chrono::steady_clock::now() - start;
        pool->record(ok, elapsed.count());
      });
  server.Get("/metrics", [&](const httplib::Request &, httplib::Response &res) {
    std::string text = "# TYPE kiln_requests_total counter\n"
                       "# TYPE kiln_request_failures_total counter\n"
                       "# TYPE kiln_requests_rejected_total counter\n"
                       "# TYPE kiln_request_duration_seconds histogram\n"
                       "# TYPE kiln_queue_depth gauge\n";
    for (const auto &[name, pool] : models)
      text += pool->metrics();
    res.set_content(text, "text/plain; version=0.0.4");
  });
  server.set_error_handler(
      [](const httplib::Request &, httplib::Response &res) {
        if (res.body.empty())
          sendError(res, res.status,
                    res.status == 404 ? "no such endpoint" : "bad request");
      });

  int port = options.port;
  if (port == 0) {
    port = server.bind_to_any_port(options.host);
  } else if (!server.bind_to_port(options.host, port)) {
    std::fprintf(stderr, "error: cannot listen on %s:%d\n",
                 options.host.c_str(), port);
    return 1;
  }
  if (port < 0) {
    std::fprintf(stderr, "error: cannot listen on %s\n", options.host.c_str());
    return 1;
  }
  std::thread stopper([&] {
    int signal = 0;
    sigwait(&stopSignals, &signal);
    server.stop();
  });
  std::printf("kiln-serve: %zu model(s) on http://%s:%d\n", models.size(),
              options.host.c_str(), port);
  std::fflush(stdout);
  server.listen_after_bind();
  // A stop that did not come from a signal: wake the stopper up.
  pthread_kill(stopper.native_handle(), SIGTERM);
  stopper.join();
  return 0;
}
