#pragma once
// The GUI's import of several snapshots / RMM CSVs at once (File ▸ Open with several files,
// File ▸ Open Folder…, drag and drop): a background job running storage::BatchImport on all
// cores into the document's session, with progress over the files and Cancel. A refused file is
// named in the outcome and the others still land.
#include <QString>
#include <QStringList>

#include <functional>

class QObject;

namespace allocscope::storage {
class SessionWriter;
}

namespace allocscope::app {

class BackgroundJob;

class MultiImport {
public:
    struct Outcome {
        QStringList refused;   // "<file>: <what> (<where>)", one per refused file
        QStringList diverged;  // "run N: <how the replay differed>"
        int runs = 0;
        int files = 0;
    };
    // The snapshots and CSVs directly inside `folder` (*.pickle, *.pkl, *.json, *.csv), in
    // natural order: rank2 before rank10, so run numbers follow the ranks of a folder of them.
    static QStringList tracesInFolder(const QString& folder);
    // The job (not started). `done` runs on the GUI thread after the import with what happened.
    // The job fails (BackgroundJob::failed) when no file could be imported or the session could
    // not be written.
    static BackgroundJob* create(storage::SessionWriter* writer, const QStringList& paths,
                                 std::function<void(const Outcome&)> done, QObject* parent);
};

}  // namespace allocscope::app
