#include "storage/session/NewSessionFile.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "storage/session/SessionError.h"
#include "storage/session/SessionSchema.h"
#include "storage/session/SqliteDb.h"

namespace allocscope::storage {
namespace {

void removeWithSidecars(const std::string& path) {
    std::error_code ec;
    for (const char* suffix : {"", "-journal", "-wal", "-shm"}) std::filesystem::remove(path + suffix, ec);
}

}  // namespace

NewSessionFile::NewSessionFile(std::string target) : target_(std::move(target)) {
    const std::filesystem::path where(target_);
    std::filesystem::path folder = where.parent_path();
    if (folder.empty()) folder = ".";
    // Hidden and named after the target, so a leftover of a killed process says what it was.
    // Created with mode 0666 (less the umask), like any file SQLite creates: mkstemp's 0600
    // would hide a shared session from its other readers.
    static std::atomic<unsigned> counter{0};
    int fd = -1;
    for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
        // Appended piece by piece: g++ 12 at -O3 reports a false -Wrestrict on "." + std::string.
        std::string name(".");
        name += where.filename().string();
        name += ".creating-";
        name += std::to_string(::getpid());
        name += '-';
        name += std::to_string(counter++);
        temporary_ = (folder / name).string();
        fd = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        const int error = errno;
        temporary_.clear();
        throw SessionError(std::string("cannot create the session: ") + std::strerror(error), target_);
    }
    ::close(fd);
    try {
        SqliteDb db(temporary_, SqliteDb::Mode::ReadWriteCreate);  // an empty file is an empty database
        db.exec("PRAGMA page_size = 8192");
        db.exec("PRAGMA journal_mode = WAL");
        SessionSchema::create(db);
        db.close();  // the last connection: checkpoints and removes the -wal
        if (sidecarExists(temporary_, "-wal")) throw SessionError("cannot create the session: its log stayed open", target_);
    } catch (...) {
        removeWithSidecars(temporary_);
        throw;
    }
}

NewSessionFile::~NewSessionFile() {
    if (!settled_ && !temporary_.empty()) removeWithSidecars(temporary_);
}

bool NewSessionFile::publish() {
    // link(2) never replaces an existing name. Filesystems without hard links (some FUSE and
    // FAT mounts) get renameat2's RENAME_NOREPLACE, which is just as atomic.
    int rc = ::link(temporary_.c_str(), target_.c_str());
    if (rc != 0 && errno != EEXIST) {
        rc = ::renameat2(AT_FDCWD, temporary_.c_str(), AT_FDCWD, target_.c_str(), RENAME_NOREPLACE);
        if (rc == 0) {
            settled_ = true;
            return true;
        }
    }
    if (rc != 0) {
        const int error = errno;
        removeWithSidecars(temporary_);
        settled_ = true;
        if (error == EEXIST) return false;
        throw SessionError(std::string("cannot create the session: ") + std::strerror(error), target_);
    }
    std::error_code ec;
    std::filesystem::remove(temporary_, ec);  // the target name keeps the file
    settled_ = true;
    return true;
}

}  // namespace allocscope::storage
