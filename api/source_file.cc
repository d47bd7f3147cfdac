#include "api/source_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "relay/error.h"

namespace relay::api {

std::shared_ptr<const std::string> ReadSourceFile(const std::string& path) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream file(path, std::ios::binary);
    if (!file)
      throw Error(ErrorKind::kLoad, std::string("cannot open: ") + std::strerror(errno),
                  SourceSpan{path});
    std::ostringstream contents;
    contents << file.rdbuf();
    if (file.bad())
      throw Error(ErrorKind::kLoad, std::string("cannot read: ") + std::strerror(errno),
                  SourceSpan{path});
    text = std::move(contents).str();
  }
  if (text.find('\0') != std::string::npos) {
    throw Error(ErrorKind::kLoad, "contains NUL bytes: not a Relay text file", SourceSpan{path});
  }
  return std::make_shared<const std::string>(std::move(text));
}

}  // namespace relay::api
