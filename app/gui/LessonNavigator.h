#pragma once
// What a guided lesson may ask of the main window while it walks its steps: which session and
// run to show, where the scrubber stands, which view is in front and which block is selected.
// The main window implements it; the lesson controller only talks to this interface, so lessons
// can be tested against a fake window.
#include <QString>
#include <QList>
#include <QtGlobal>

namespace allocscope::app {

class LessonNavigator {
public:
    virtual ~LessonNavigator() = default;

    // Opens a session file (read-only unless the user records into it). False: it could not be
    // opened (the window has told the user why).
    virtual bool openSessionFile(const QString& path) = 0;
    // Selects run `number` (from 1) of the open session.
    virtual void selectRun(int number) = 0;
    // Moves the scrubber to event `seq` of the selected run (clamped to the run).
    virtual void goToEvent(qint64 seq) = 0;
    // Brings a view to the front: "segments", "heatmap", "timeline", "summary" or "compare".
    virtual void showView(const QString& name) = 0;
    // Selects the block that covers `address` at the current event (no-op when none does).
    virtual void selectBlock(quint64 address) = 0;
    // Shows the compare tab for these runs of the open session (same program, other configs).
    virtual void showComparison(const QList<int>& runs) = 0;
};

}  // namespace allocscope::app
