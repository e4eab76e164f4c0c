#pragma once
// The GUI's command line, parsed without a QApplication so tests can call it directly.
#include <QString>
#include <QStringList>
#include <QtGlobal>

namespace allocscope::app {

struct CommandLineOptions {
    QStringList files;      // sessions, snapshots or CSVs to open
    bool showHelp = false;
    bool showVersion = false;
    QString helpText;       // filled when showHelp is set
    QString error;          // non-empty: the arguments were invalid; say this and exit 2
    // Where to start (what a lesson, a bug report or the README's screenshots point at).
    int run = -1;           // --run N: select run N of the session
    qint64 event = -1;      // --event E: move the scrubber to event E
    QString view;           // --view segments|heatmap|timeline|compare|compare-maps|summary
    quint64 block = 0;      // --block ADDRESS: select the block covering ADDRESS (0 = none)
    QString theme;          // --theme light|dark|system (also remembered)
    QString find;           // --find TEXT: search frames (or a 0x address), as the Find field does
    QString screenshot;     // --screenshot FILE.png: save the window once shown, then quit
    // The left panel's next run, then Run or Compare once the session is shown (a what-if on a
    // recording from the command line, and the README's screenshots of it).
    QString config;         // --config STR: the config editor's PYTORCH_CUDA_ALLOC_CONF (isNull: unchanged)
    double memoryFraction = -1;  // --memory-fraction F: the memory fraction field (< 0: unchanged)
    QString action;         // --then run|compare
};

// `arguments` includes the program name, as QCoreApplication::arguments() does.
CommandLineOptions parseCommandLine(const QStringList& arguments);

}  // namespace allocscope::app
