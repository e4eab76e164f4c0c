#include "app/gui/SessionWatcher.h"

#include <QFile>

#include <sys/stat.h>

namespace allocscope::app {

SessionWatcher::SessionWatcher(QObject* parent) : QObject(parent) {
    timer_.setInterval(kPollMs);
    connect(&timer_, &QTimer::timeout, this, &SessionWatcher::poll);
}

SessionWatcher::Stamp SessionWatcher::stampOf(const QString& path) {
    struct stat st {};
    if (::stat(QFile::encodeName(path).constData(), &st) != 0) return {};
    return {static_cast<std::int64_t>(st.st_size),
            static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
            static_cast<std::int64_t>(st.st_ino)};
}

void SessionWatcher::watch(const QString& path) {
    path_ = path;
    file_ = log_ = Stamp{};
    if (path_.isEmpty()) {
        timer_.stop();
        return;
    }
    file_ = stampOf(path_);
    log_ = stampOf(path_ + QStringLiteral("-wal"));
    timer_.start();
}

bool SessionWatcher::poll() {
    if (path_.isEmpty()) return false;
    const Stamp file = stampOf(path_);
    const Stamp wal = stampOf(path_ + QStringLiteral("-wal"));
    if (file == file_ && wal == log_) return false;
    file_ = file;
    log_ = wal;
    emit changed();
    return true;
}

}  // namespace allocscope::app
