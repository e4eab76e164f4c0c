#pragma once
// Run and Compare record into the open session. When its file cannot be written (a read-only
// file or folder: a colleague's session, a mounted archive), the window asks one question
// instead of failing at the first write: save a copy and record into that? The original file
// is never touched.
#include <QString>

#include <functional>

class QWidget;

namespace allocscope::app {

class ReadOnlySessionPrompt {
public:
    // True when recording into `path` would fail or is not wanted: the file is not writable, its
    // owner's write permission is off, or the folder SQLite writes its write-ahead log into is
    // not writable.
    static bool isReadOnly(const QString& path);
    // "Save a copy and record into it?", then where (a Save dialog, starting beside the
    // original, or in the documents folder when that folder is read-only). The chosen path, or ""
    // when the user declined.
    static QString askForCopy(QWidget* parent, const QString& path);
    // Before the first recording into `path`: true when it may be written, or when the user chose
    // a copy and `saveAs(copy)` made it the document; false when the user declined (or saving failed).
    static bool offerCopy(QWidget* parent, const QString& path, const std::function<bool(const QString& copy)>& saveAs);
};

}  // namespace allocscope::app
