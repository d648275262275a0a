#include "test_support.h"

#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::test {

std::string fixturePath(const std::string &name) {
  return std::string(KILN_TEST_FIXTURE_DIR) + "/" + name + ".so";
}

std::string scratchPath(const std::string &name) {
  ::mkdir(KILN_TEST_TMP_DIR, 0777);
  return std::string(KILN_TEST_TMP_DIR) + "/" + name;
}

void writeBytes(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    throw std::runtime_error("cannot write " + path);
  if (!bytes.empty())
    std::fwrite(bytes.data(), 1, bytes.size(), file);
  std::fclose(file);
}

void writeText(const std::string &path, const std::string &text) {
  writeBytes(path, std::vector<uint8_t>(text.begin(), text.end()));
}

std::vector<uint8_t> readBytes(const std::string &path) {
  std::vector<uint8_t> bytes;
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    throw std::runtime_error("cannot read " + path);
  int c;
  while ((c = std::fgetc(file)) != EOF)
    bytes.push_back(static_cast<uint8_t>(c));
  std::fclose(file);
  return bytes;
}

namespace {
// Points file descriptor `fd` at a scratch file until restored.
class Redirect {
public:
  Redirect(std::FILE *stream, const std::string &path)
      : stream_(stream), path_(path) {
    std::fflush(stream_);
    fd_ = fileno(stream_);
    saved_ = ::dup(fd_);
    int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(file, fd_);
    ::close(file);
  }
  std::string finish() {
    std::fflush(stream_);
    ::dup2(saved_, fd_);
    ::close(saved_);
    std::vector<uint8_t> bytes = readBytes(path_);
    return std::string(bytes.begin(), bytes.end());
  }

private:
  std::FILE *stream_;
  std::string path_;
  int fd_, saved_;
};
} // namespace

CommandResult runCommand(int (*main)(int, char **),
                         const std::vector<std::string> &args) {
  std::vector<std::string> storage = args;
  std::vector<char *> argv;
  for (std::string &arg : storage)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  Redirect out(stdout, scratchPath("captured_stdout.txt"));
  Redirect err(stderr, scratchPath("captured_stderr.txt"));
  int code = main(static_cast<int>(storage.size()), argv.data());
  CommandResult result{code, out.finish(), err.finish()};
  return result;
}

std::string useFakeDriver(
    const std::vector<std::pair<const char *, const char *>> &settings) {
  setenv("KILN_CUDA_DRIVER", fixturePath("fake_cuda").c_str(), 1);
  for (const char *name :
       {"FAKE_CUDA_DEVICES", "FAKE_CUDA_NO_BINARY", "FAKE_CUDA_MEMORY",
        "FAKE_CUDA_FAIL_LAUNCH", "FAKE_CUDA_FAULT", "KILN_CUDA_SYNC"})
    unsetenv(name);
  for (auto [name, value] : settings)
    setenv(name, value, 1);
  std::string log = scratchPath("fake_cuda.log");
  std::ofstream(log, std::ios::trunc);
  setenv("FAKE_CUDA_LOG", log.c_str(), 1);
  return log;
}

std::string readLog(const std::string &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace kiln::test
