#include "app/CommandLine.h"

#include <QCommandLineParser>

namespace allocscope::app {

CommandLineOptions parseCommandLine(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("AllocScope: a lab for the PyTorch CUDA caching allocator."));
    const QCommandLineOption helpOption({QStringLiteral("h"), QStringLiteral("help")},
                                        QStringLiteral("Show this help and exit."));
    const QCommandLineOption versionOption({QStringLiteral("v"), QStringLiteral("version")},
                                           QStringLiteral("Show the version and exit."));
    parser.addOption(helpOption);
    parser.addOption(versionOption);
    parser.addPositionalArgument(
        QStringLiteral("files"),
        QStringLiteral("Session files (.allocscope), PyTorch snapshots (.pickle, .json) or RMM CSV logs to open."),
        QStringLiteral("[FILE...]"));

    CommandLineOptions options;
    if (!parser.parse(arguments)) {
        options.error = parser.errorText();
        return options;
    }
    options.showHelp = parser.isSet(helpOption);
    options.showVersion = parser.isSet(versionOption);
    if (options.showHelp) options.helpText = parser.helpText();
    options.files = parser.positionalArguments();
    return options;
}

}  // namespace allocscope::app
