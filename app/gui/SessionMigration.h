#pragma once
// The GUI's way into a session written by an older AllocScope: such a file is refused as it is
// (a session is the user's document and is never upgraded in place), so opening one offers to
// migrate it into a copy. The user agrees, picks where the copy goes, the copy is written in a
// background job (the 2 -> 3 step replays every run to rebuild its heatmap, which can take a
// while on a large session), and the copy is opened. The original is only ever read.
#include <QCoreApplication>
#include <QString>

#include <functional>
#include <optional>

class QWidget;

namespace allocscope::app {

class BackgroundJob;

class SessionMigration {
    Q_DECLARE_TR_FUNCTIONS(SessionMigration)
public:
    // What the modal dialogs would ask, replaceable so that tests drive the whole path without a
    // dialog blocking them. ask: true = "Migrate…". chooseTarget: the copy's path, empty = cancel.
    struct Prompts {
        std::function<bool(const QString& source, int schema)> ask;
        std::function<QString(const QString& suggested)> chooseTarget;
    };
    // Replaces the dialogs until called again; a Prompts with empty functions restores them.
    static void setPromptsForTesting(Prompts prompts);

    // The schema of `path` if it is an AllocScope session older than this build reads; nothing
    // when it is current, newer, not a session or unreadable (the usual open error covers those).
    // Only reads the file.
    static std::optional<int> olderSchemaOf(const QString& path);

    // Where the copy goes by default: "<name>-v<M>.allocscope" beside the original, or in the
    // user's documents folder (or home, when there is none) when the original's folder is not
    // writable; "-2", "-3", … are appended while that name is taken.
    static QString suggestedTarget(const QString& source);

    // Migrates `source` into `target` (which must not exist) and checks that the copy opens as an
    // intact session. Throws std::runtime_error with a sentence naming the file; then nothing is
    // left at `target`. Blocking: runs in a background job. `progress(done, total)` follows the
    // replay of the runs; returning false cancels (nothing is left at `target` then either).
    static void migrate(const QString& source, const QString& target,
                        const std::function<bool(quint64 done, quint64 total)>& progress = {});

    // If `source` is an older session: asks the user, asks for the target, migrates in the
    // background (a child job of `parent`, busy cursor, status bar message) and calls
    // open(copy) on the GUI thread once the copy is written; failures are shown in a message box.
    // Returns false when `source` is not an older session, so the caller reports its own error.
    // `started(job)` lets the window show the job's progress and offer Cancel (a cancelled
    // migration keeps nothing and shows no error).
    static bool offer(QWidget* parent, const QString& source, std::function<void(const QString& copy)> open,
                      std::function<void(BackgroundJob* job)> started = {});
};

}  // namespace allocscope::app
