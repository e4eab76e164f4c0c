#include "storage/formats/FileBytes.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <sys/stat.h>

#include "storage/formats/FormatError.h"

namespace allocscope::formats {

std::string FileBytes::read(const std::string& path) {
    // stdio rather than iostreams: a clear errno for the message, and no locale in the way.
    std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!file) throw FormatError(std::string("cannot open file: ") + std::strerror(errno), path);
    std::string bytes;
    // Reserve the size up front: growing by doubling would briefly hold two copies of a big file.
    // A size that cannot be known (a pipe) just grows.
    struct stat info {};
    if (::fstat(::fileno(file.get()), &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0) {
        bytes.reserve(static_cast<size_t>(info.st_size));
    }
    char buffer[1 << 16];
    while (true) {
        const size_t n = std::fread(buffer, 1, sizeof buffer, file.get());
        bytes.append(buffer, n);
        if (n < sizeof buffer) break;
    }
    if (std::ferror(file.get())) throw FormatError(std::string("cannot read file: ") + std::strerror(errno), path);
    return bytes;
}

}  // namespace allocscope::formats
