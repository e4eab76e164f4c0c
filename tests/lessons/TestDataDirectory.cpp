// Where the lessons are found at run time: an override, then share/allocscope beside the running
// executable (an installed or unpacked package), then the source tree (development builds). The
// executable and source tree are faked with temporary folders, so the order is checked without
// installing anything.
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <string>

#include "app/lessons/DataDirectory.h"
#include "app/lessons/LessonLibrary.h"

using allocscope::app::DataDirectory;
namespace fs = std::filesystem;

class TestDataDirectory : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::string root() const { return dir_.path().toStdString(); }
    // A fake install prefix: PREFIX/bin/allocscope-cli, optionally PREFIX/share/allocscope/lessons.
    std::string prefix() const { return root() + "/prefix"; }
    std::string exe() const { return prefix() + "/bin/allocscope-cli"; }
    std::string share() const { return prefix() + "/share/allocscope/lessons"; }
    std::string source() const { return root() + "/src/resources"; }

private slots:
    void init() {
        QVERIFY(dir_.isValid());
        fs::remove_all(root());
        fs::create_directories(prefix() + "/bin");
        fs::create_directories(source() + "/lessons");
    }

    void theShareFolderBesideTheExecutableWinsOverTheSourceTree() {
        fs::create_directories(share());
        QCOMPARE(DataDirectory::locate("lessons", "", exe(), source()), share());
    }

    void withoutAShareFolderTheSourceTreeIsUsed() {
        QCOMPARE(DataDirectory::locate("lessons", "", exe(), source()), source() + "/lessons");
    }

    void anOverrideWinsEvenWhenItDoesNotExist() {
        // A mistyped $ALLOCSCOPE_LESSONS_DIR must be reported, not replaced by the shipped lessons.
        fs::create_directories(share());
        QCOMPARE(DataDirectory::locate("lessons", "/nowhere/lessons", exe(), source()), std::string("/nowhere/lessons"));
    }

    void aPackagedBuildNamesTheShareFolderWhenNothingIsThere() {
        // No source fallback compiled in and nothing installed: the error must point at the
        // installed location, not at some build machine's tree.
        QCOMPARE(DataDirectory::locate("lessons", "", exe(), ""), share());
    }

    void theSourceTreeIsNamedWhenNothingExists() {
        fs::remove_all(source());
        QCOMPARE(DataDirectory::locate("lessons", "", exe(), source()), source() + "/lessons");
    }

    void theRunningExecutableIsThisTest() {
        // /proc/self/exe, not argv[0]: the test is run from its own working directory by CTest.
        QCOMPARE(QString::fromStdString(DataDirectory::executablePath()),
                 QFileInfo(QCoreApplication::applicationFilePath()).canonicalFilePath());
    }

    void theLessonLibraryHonoursItsOverrideVariable() {
        qputenv("ALLOCSCOPE_LESSONS_DIR", QByteArray::fromStdString(share()));
        QCOMPARE(allocscope::app::LessonLibrary::defaultFolder(), share());
        qunsetenv("ALLOCSCOPE_LESSONS_DIR");
        // This test binary has no share/ folder beside it: a development build reads the tree.
        if (DataDirectory::sourceResources().empty()) QSKIP("built with ALLOCSCOPE_SOURCE_RESOURCES=OFF");
        QCOMPARE(allocscope::app::LessonLibrary::defaultFolder(), DataDirectory::sourceResources() + "/lessons");
    }
};

QTEST_GUILESS_MAIN(TestDataDirectory)
#include "TestDataDirectory.moc"
