#pragma once
// Carries out the command line's "where to start" once the window is up: open the files, then
// (as the run list and states arrive) select the run, move to the event, bring the view to the
// front, select the block, and for --screenshot save the window and quit.
#include <QObject>

#include "app/gui/CommandLine.h"

class QTimer;

namespace allocscope::app {

class MainWindow;

class StartupScript : public QObject {
    Q_OBJECT
public:
    StartupScript(MainWindow& window, CommandLineOptions options);
    int exitCode() const { return exitCode_; }

public slots:
    void start();

private:
    void poll();
    MainWindow& window_;
    CommandLineOptions options_;
    QTimer* timer_;
    int stage_ = 0;
    int ticks_ = 0;
    int exitCode_ = 0;
};

}  // namespace allocscope::app
