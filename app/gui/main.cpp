// allocscope: the desktop app.
#include <QApplication>
#include <QTimer>
#include <cstdio>

#include "app/gui/CommandLine.h"
#include "app/gui/MainWindow.h"
#include "app/gui/StartupScript.h"

int main(int argc, char** argv) {
    // The .qrc is compiled into the static allocscope_appcore library: register it explicitly,
    // or the linker drops it and the window has no icon.
    Q_INIT_RESOURCE(allocscope);
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("AllocScope"));
    QApplication::setApplicationName(QStringLiteral("AllocScope"));
    QApplication::setApplicationVersion(QStringLiteral(ALLOCSCOPE_VERSION));

    const allocscope::app::CommandLineOptions options =
        allocscope::app::parseCommandLine(QApplication::arguments());
    if (!options.error.isEmpty()) {
        std::fprintf(stderr, "allocscope: %s (try: allocscope --help)\n", qPrintable(options.error));
        return 2;
    }
    if (options.showHelp) {
        std::fputs(qPrintable(options.helpText), stdout);
        return 0;
    }
    if (options.showVersion) {
        std::printf("allocscope %s\n", ALLOCSCOPE_VERSION);
        return 0;
    }
    allocscope::app::MainWindow window;
    window.show();
    allocscope::app::StartupScript script(window, options);
    QTimer::singleShot(0, &script, &allocscope::app::StartupScript::start);
    const int status = QApplication::exec();
    return status != 0 ? status : script.exitCode();
}
