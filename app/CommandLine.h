#pragma once
// The GUI's command line, parsed without a QApplication so tests can call it directly.
#include <QString>
#include <QStringList>

namespace allocscope::app {

struct CommandLineOptions {
    QStringList files;      // sessions, snapshots or CSVs to open
    bool showHelp = false;
    bool showVersion = false;
    QString helpText;       // filled when showHelp is set
    QString error;          // non-empty: the arguments were invalid; say this and exit 2
};

// `arguments` includes the program name, as QCoreApplication::arguments() does.
CommandLineOptions parseCommandLine(const QStringList& arguments);

}  // namespace allocscope::app
