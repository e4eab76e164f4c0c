#pragma once
// Notices that another process changed the open session (a CLI `run --db`, another window's Run)
// so the GUI can show the new runs without reopening the file.
//
// Why a poll and not QFileSystemWatcher: SQLite writes into the session's write-ahead log
// (FILE-wal), which appears with the first writer and is removed when the last one closes, so
// an inotify watch on it is lost every time; and sessions written by jobs on other machines
// (a cluster's shared filesystem, NFS) produce no inotify events at all. Comparing the size,
// modification time and identity of the file and its log once a second costs two stat() calls
// and works everywhere.
#include <QObject>
#include <QString>
#include <QTimer>

#include <cstdint>

namespace allocscope::app {

class SessionWatcher : public QObject {
    Q_OBJECT
public:
    static constexpr int kPollMs = 1000;

    explicit SessionWatcher(QObject* parent = nullptr);

    // Starts watching `path` from its present state ("" stops).
    void watch(const QString& path);
    const QString& path() const { return path_; }
    // Compares the file with the last look and emits changed() when it differs. The timer calls
    // it; tests call it directly.
    bool poll();

signals:
    // The file or its write-ahead log differs from the last look: another process committed.
    void changed();

private:
    struct Stamp {
        std::int64_t size = -1, mtimeNs = -1, inode = -1;  // inode: a log removed and made again
        bool operator==(const Stamp&) const = default;
    };
    static Stamp stampOf(const QString& path);

    QString path_;
    QTimer timer_;
    Stamp file_, log_;
};

}  // namespace allocscope::app
