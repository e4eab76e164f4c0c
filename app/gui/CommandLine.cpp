#include "app/gui/CommandLine.h"

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
    const QCommandLineOption runOption(QStringLiteral("run"), QStringLiteral("Select run N of the session."), QStringLiteral("N"));
    const QCommandLineOption eventOption(QStringLiteral("event"), QStringLiteral("Move the scrubber to event E (from 0)."), QStringLiteral("E"));
    const QCommandLineOption viewOption(QStringLiteral("view"), QStringLiteral("Bring a view to the front: segments, heatmap, timeline, compare (the runs of the selected run's program), "
                                                                         "compare-maps (its Timeline & maps page), allocations, stacks, tensors, ranks, summary or oom."),
                                        QStringLiteral("NAME"));
    const QCommandLineOption blockOption(QStringLiteral("block"), QStringLiteral("Select the block covering ADDRESS (hex 0x... or decimal)."),
                                         QStringLiteral("ADDRESS"));
    const QCommandLineOption themeOption(QStringLiteral("theme"), QStringLiteral("Colour theme: light, dark or system (remembered)."),
                                         QStringLiteral("THEME"));
    const QCommandLineOption screenshotOption(QStringLiteral("screenshot"),
                                              QStringLiteral("Save the window as a PNG once the views are shown, then quit."), QStringLiteral("FILE"));
    const QCommandLineOption configOption(QStringLiteral("config"), QStringLiteral("Put STR in the config editor (PYTORCH_CUDA_ALLOC_CONF)."),
                                          QStringLiteral("STR"));
    const QCommandLineOption fractionOption(QStringLiteral("memory-fraction"),
                                            QStringLiteral("Set the memory fraction of a recording's replay (0..1)."), QStringLiteral("F"));
    const QCommandLineOption thenOption(QStringLiteral("then"),
                                        QStringLiteral("Once the session is shown, press Run or Compare: run or compare."), QStringLiteral("ACTION"));
    parser.addOption(helpOption);
    parser.addOptions({configOption, fractionOption, thenOption});
    parser.addOption(versionOption);
    const QCommandLineOption findOption(QStringLiteral("find"),
                                        QStringLiteral("Highlight the blocks whose stack has a frame containing TEXT (or the block at a 0x address)."),
                                        QStringLiteral("TEXT"));
    parser.addOptions({runOption, eventOption, viewOption, blockOption, themeOption, findOption, screenshotOption});
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
    if (parser.isSet(findOption)) options.find = parser.value(findOption);
    if (options.showHelp) options.helpText = parser.helpText();
    options.files = parser.positionalArguments();
    bool ok = true;
    if (parser.isSet(runOption)) {
        options.run = parser.value(runOption).toInt(&ok);
        if (!ok || options.run < 1) options.error = QStringLiteral("--run needs a run number from 1, got '%1'").arg(parser.value(runOption));
    }
    if (parser.isSet(eventOption)) {
        options.event = parser.value(eventOption).toLongLong(&ok);
        if (!ok || options.event < 0) options.error = QStringLiteral("--event needs an event index from 0, got '%1'").arg(parser.value(eventOption));
    }
    if (parser.isSet(viewOption)) {
        options.view = parser.value(viewOption).toLower();
        static const QStringList kViews{QStringLiteral("segments"), QStringLiteral("heatmap"), QStringLiteral("timeline"),
                                        QStringLiteral("compare"), QStringLiteral("compare-maps"), QStringLiteral("allocations"),
                                        QStringLiteral("stacks"), QStringLiteral("tensors"), QStringLiteral("ranks"), QStringLiteral("summary"),
                                        QStringLiteral("inspector"), QStringLiteral("oom")};
        if (!kViews.contains(options.view)) options.error = QStringLiteral("--view must be one of %1, got '%2'").arg(kViews.join(QStringLiteral(", ")), options.view);
    }
    if (parser.isSet(blockOption)) {
        options.block = parser.value(blockOption).toULongLong(&ok, 0);
        if (!ok) options.error = QStringLiteral("--block needs an address (0x... or decimal), got '%1'").arg(parser.value(blockOption));
    }
    if (parser.isSet(themeOption)) {
        options.theme = parser.value(themeOption).toLower();
        if (options.theme != QLatin1String("light") && options.theme != QLatin1String("dark") && options.theme != QLatin1String("system"))
            options.error = QStringLiteral("--theme must be light, dark or system, got '%1'").arg(options.theme);
    }
    options.screenshot = parser.value(screenshotOption);
    if (parser.isSet(configOption)) options.config = parser.value(configOption).isNull() ? QStringLiteral("") : parser.value(configOption);
    if (parser.isSet(fractionOption)) {
        options.memoryFraction = parser.value(fractionOption).toDouble(&ok);
        if (!ok || !(options.memoryFraction >= 0.0 && options.memoryFraction <= 1.0))
            options.error = QStringLiteral("--memory-fraction needs a number from 0 to 1, got '%1'").arg(parser.value(fractionOption));
    }
    if (parser.isSet(thenOption)) {
        options.action = parser.value(thenOption).toLower();
        if (options.action != QLatin1String("run") && options.action != QLatin1String("compare"))
            options.error = QStringLiteral("--then must be run or compare, got '%1'").arg(options.action);
    }
    return options;
}

}  // namespace allocscope::app
