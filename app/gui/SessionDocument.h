#pragma once
// The open session: its file, whether it is a temporary one (File ▸ New, or an imported snapshot
// / RMM CSV) that lives until Save As, and the session's writer. A session opens read-only: the
// writer (and with it the first byte written to the file) exists only once the user records
// into it (Run, Compare, an import into a temporary session). Readers are never kept here: each
// background job opens its own SessionReader (one connection per thread).
#include <QString>

#include <memory>
#include <utility>

class QTemporaryDir;

namespace allocscope::storage {
class SessionWriter;
}

namespace allocscope::app {

class SessionDocument {
public:
    ~SessionDocument();
    SessionDocument(const SessionDocument&) = delete;
    SessionDocument& operator=(const SessionDocument&) = delete;

    // An existing session file, checked (what it is, schema, tables, every run's rows) before
    // anything else happens. Throws storage::SessionError (what + where) when it is not a
    // session. SQLite's page-by-page integrity check reads the whole file (seconds for a big
    // one), so it is left to the first background read: see needsIntegrityCheck().
    static std::unique_ptr<SessionDocument> open(const QString& path);
    // An empty session in a private temporary directory, named `baseName`.allocscope, deleted
    // with the document unless saved with Save As. Throws storage::SessionError.
    static std::unique_ptr<SessionDocument> createTemporary(const QString& baseName = QStringLiteral("untitled"));
    // Whether `path` is to be opened as a session rather than imported as a trace: its name ends
    // in .allocscope, or it starts with SQLite's header (a session saved under another name).
    static bool looksLikeSession(const QString& path);

    const QString& path() const { return path_; }
    bool isTemporary() const { return temporaryDir_ != nullptr; }
    QString displayName() const;  // file name, "(unsaved)" for temporary sessions
    // True once for a document opened from a file: the caller's next read runs the integrity
    // check (storage::SessionReader(path, true)) and closes the document if it fails.
    bool takeIntegrityCheck() { return std::exchange(integrityCheckDue_, false); }

    // The session's writer, opened on first use (thread-safe to submit to; see SessionWriter).
    storage::SessionWriter& writer();
    storage::SessionWriter* writerIfOpen() const { return writer_.get(); }
    // Commits everything recorded so far (readers opened afterwards see it). Throws SessionError.
    void flush();

    // Writes a consistent copy of the session to `target` (SQLite's VACUUM INTO through a fresh
    // read connection, into a temporary name beside the target, then renamed) and makes the
    // copy the document. The writer is closed first (it reopens on the next recording).
    // false + *error (what and where) on failure; the document is unchanged then.
    bool saveAs(const QString& target, QString* error);

private:
    SessionDocument() = default;
    void closeWriter();

    QString path_;
    std::unique_ptr<QTemporaryDir> temporaryDir_;
    std::unique_ptr<storage::SessionWriter> writer_;
    bool integrityCheckDue_ = false;
};

}  // namespace allocscope::app
