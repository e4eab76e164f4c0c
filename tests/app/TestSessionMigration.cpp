// Opening a session written by an older AllocScope in the real main window: the user is asked,
// picks the copy's name (both answered through SessionMigration's prompts instead of modal
// dialogs), the copy is written in the background and opened with every run, and the original
// stays byte-identical with no sidecar. Declining, cancelling the file choice, an existing target
// and a failing migration write nothing; current, newer and foreign files never ask.
#include <QtTest>

#include <QAbstractButton>
#include <QCryptographicHash>
#include <QMessageBox>
#include <QSettings>
#include <QTemporaryDir>

#include <optional>

#include "tests/FileBytes.h"
#include "MessageBoxCatcher.h"
#include "SessionFixture.h"
#include "app/gui/MainWindow.h"
#include "app/gui/SessionMigration.h"
#include "storage/session/SchemaVersion.h"
#include "storage/session/SessionReader.h"
#include "storage/session/SqliteDb.h"
#include "views/widgets/RunListModel.h"
#include "views/widgets/RunListWidget.h"

using allocscope::app::MainWindow;
using allocscope::app::SessionMigration;
namespace storage = allocscope::storage;

namespace {
constexpr int kTimeout = 30000;

using testing::MessageBoxCatcher;

bool sidecarsBeside(const QString& path) {
    for (const char* suffix : {"-wal", "-shm", "-journal"}) {
        if (QFileInfo::exists(path + QLatin1String(suffix))) return true;
    }
    return false;
}

void execOn(const QString& path, const std::string& sql) {
    storage::SqliteDb db(path.toStdString(), storage::SqliteDb::Mode::ReadWriteCreate);
    db.exec(sql);
}

}  // namespace

class TestSessionMigration : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString good_;  // current schema, two runs

    // What the prompts were asked, and how they answer.
    QStringList asked_;
    std::optional<int> askedSchema_;
    QString suggested_;
    bool agree_ = true;
    QString target_;

    QString copyOfGood(const QString& name) {
        const QString path = dir_.filePath(name);
        QFile::remove(path);
        if (!QFile::copy(good_, path)) return {};
        QFile(path).setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
        return path;
    }
    // A file as the first AllocScope release wrote it: no phase table, user_version 1.
    QString schemaOne(const QString& name) {
        const QString path = copyOfGood(name);
        execOn(path, "DROP TABLE phase; PRAGMA user_version = 1");
        return path;
    }

    // The prompts every case but one answers through.
    void installPrompts() {
        SessionMigration::setPromptsForTesting({
            [this](const QString& source, int schema) {
                asked_ << source;
                askedSchema_ = schema;
                return agree_;
            },
            [this](const QString& suggested) {
                suggested_ = suggested;
                return target_;
            },
        });
    }

private slots:
    void initTestCase() {
        QCoreApplication::setOrganizationName("AllocScopeTest");
        QCoreApplication::setApplicationName("TestSessionMigration");
        QSettings().clear();
        QVERIFY(dir_.isValid());
        good_ = dir_.filePath("good.allocscope");
        testing::recordFrag101(good_, {"", "expandable_segments:True"});
        installPrompts();
    }

    void cleanupTestCase() { SessionMigration::setPromptsForTesting({}); }

    void init() {
        asked_.clear();
        askedSchema_.reset();
        suggested_.clear();
        agree_ = true;
        target_.clear();
    }

    void anOlderSessionOpensAsAMigratedCopy() {
        const QString old = schemaOne("lab.allocscope");
        const QByteArray before = testfiles::sha256Of(old);
        target_ = dir_.filePath("lab-migrated.allocscope");
        MessageBoxCatcher boxes;
        MainWindow window;
        window.resize(1280, 720);
        window.show();
        window.openFile(old);
        QCOMPARE(asked_, QStringList({old}));
        QCOMPARE(askedSchema_, std::optional<int>(1));
        QCOMPARE(suggested_, dir_.filePath(QStringLiteral("lab-v%1.allocscope").arg(storage::kSchemaVersion)));
        QTRY_COMPARE_WITH_TIMEOUT(QFileInfo(window.currentFile()), QFileInfo(target_), kTimeout);
        QTRY_COMPARE_WITH_TIMEOUT(window.runList()->model()->rowCount(), 2, kTimeout);
        QVERIFY2(boxes.texts.isEmpty(), qPrintable(boxes.texts.join('\n')));
        QCOMPARE(QApplication::overrideCursor(), nullptr);
        // The original is untouched; the copy is a current session with both runs.
        QCOMPARE(testfiles::sha256Of(old), before);
        QVERIFY(!sidecarsBeside(old));
        storage::SessionReader copy(target_.toStdString());
        QCOMPARE(copy.runs().size(), std::size_t(2));
        QCOMPARE(copy.db().queryInt("PRAGMA user_version"), std::int64_t(storage::kSchemaVersion));
        // The copy is what Open Recent remembers, not the file it cannot open.
        QCOMPARE(window.recentFiles().value(0), QFileInfo(target_).absoluteFilePath());
        QVERIFY(!window.recentFiles().contains(QFileInfo(old).absoluteFilePath()));
    }

    // The job's progress callback drives the migration: progress up to the total, and a cancel
    // (what the status bar's Cancel button sets) leaves nothing at the target.
    void migrationProgressAndCancel() {
        const QString old = schemaOne("progress.allocscope");
        const QString done = dir_.filePath("progress-done.allocscope");
        quint64 lastDone = 0, lastTotal = 0;
        SessionMigration::migrate(old, done, [&](quint64 d, quint64 t) {
            lastDone = d;
            lastTotal = t;
            return true;
        });
        QVERIFY(lastTotal > 0);
        QCOMPARE(lastDone, lastTotal);
        const QString cancelled = dir_.filePath("progress-cancelled.allocscope");
        try {
            SessionMigration::migrate(old, cancelled, [](quint64, quint64) { return false; });
            QFAIL("a cancelled migration finished");
        } catch (const std::runtime_error& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains("cancelled"), e.what());
        }
        QVERIFY(!QFileInfo::exists(cancelled));
        QVERIFY(!sidecarsBeside(cancelled));
    }

    // While a copy is being written its name is taken: not suggested again, and a second
    // migration into it is refused instead of failing and removing the first copy.
    void aCopyBeingWrittenIsNotAVictimOfASecondMigration() {
        const QString old = schemaOne("twice.allocscope");
        target_ = dir_.filePath(QStringLiteral("twice-v%1.allocscope").arg(storage::kSchemaVersion));  // the suggestion
        MessageBoxCatcher boxes;
        MainWindow window;
        window.openFile(old);
        // The job's end is only handled by the event loop, which has not run yet.
        QVERIFY(window.currentFile().isEmpty());
        QCOMPARE(SessionMigration::suggestedTarget(old),
                 dir_.filePath(QStringLiteral("twice-v%1-2.allocscope").arg(storage::kSchemaVersion)));
        window.openFile(old);
        QCOMPARE(asked_.size(), 2);
        QTRY_COMPARE_WITH_TIMEOUT(QFileInfo(window.currentFile()), QFileInfo(target_), kTimeout);
        QCOMPARE(boxes.texts.size(), 1);
        QVERIFY2(boxes.texts.first().contains("another migration"), qPrintable(boxes.texts.first()));
        storage::SessionReader copy(target_.toStdString());
        QCOMPARE(copy.runs().size(), std::size_t(2));
        QCOMPARE(QApplication::overrideCursor(), nullptr);
        // Once the job is over the claim is gone: the name is free again when the file is.
        QVERIFY(QFile::remove(target_));
        QCOMPARE(SessionMigration::suggestedTarget(old), target_);
    }

    void theSuggestedNameIsFreeAndBesideTheOriginal() {
        const QString old = schemaOne("taken.allocscope");
        const QString first = dir_.filePath(QStringLiteral("taken-v%1.allocscope").arg(storage::kSchemaVersion));
        QFile f(first);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("in the way");
        f.close();
        QCOMPARE(SessionMigration::suggestedTarget(old),
                 dir_.filePath(QStringLiteral("taken-v%1-2.allocscope").arg(storage::kSchemaVersion)));
    }

    void aReadOnlyFolderSuggestsTheDocumentsFolder() {
        QTemporaryDir locked;
        const QString old = locked.filePath("locked.allocscope");
        QVERIFY(QFile::copy(good_, old));
        QVERIFY(QFile(locked.path()).setPermissions(QFileDevice::ReadOwner | QFileDevice::ExeOwner));
        const bool writable = QFileInfo(locked.path()).isWritable();
        const QString suggested = SessionMigration::suggestedTarget(old);
        QFile(locked.path()).setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        if (writable) QSKIP("the folder stays writable (running as root)");
        const QFileInfo documents(QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation));
        const bool usable = !documents.filePath().isEmpty() && documents.isDir() && documents.isWritable();
        QCOMPARE(QFileInfo(suggested).absolutePath(), usable ? documents.absoluteFilePath() : QFileInfo(QDir::homePath()).absoluteFilePath());
        QCOMPARE(QFileInfo(suggested).fileName(), QStringLiteral("locked-v%1.allocscope").arg(storage::kSchemaVersion));
    }

    void decliningOrCancellingWritesNothing() {
        const QString old = schemaOne("declined.allocscope");
        const QByteArray before = testfiles::sha256Of(old);
        const QStringList beforeFiles = QDir(dir_.path()).entryList(QDir::Files);
        MessageBoxCatcher boxes;
        MainWindow window;
        agree_ = false;
        target_ = dir_.filePath("never.allocscope");
        window.openFile(old);
        QCOMPARE(asked_.size(), 1);
        QVERIFY(suggested_.isEmpty());  // Cancel: no file dialog either
        agree_ = true;
        target_.clear();  // the file dialog cancelled
        window.openFile(old);
        QCOMPARE(asked_.size(), 2);
        QVERIFY(!suggested_.isEmpty());
        QVERIFY(window.currentFile().isEmpty());
        QVERIFY(!window.isBusy());
        QVERIFY2(boxes.texts.isEmpty(), qPrintable(boxes.texts.join('\n')));
        QCOMPARE(QDir(dir_.path()).entryList(QDir::Files), beforeFiles);
        QCOMPARE(testfiles::sha256Of(old), before);
    }

    void anExistingTargetIsRefusedAndKept() {
        const QString old = schemaOne("existing.allocscope");
        target_ = dir_.filePath("someone-else.allocscope");
        QFile f(target_);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("keep me");
        f.close();
        MessageBoxCatcher boxes;
        MainWindow window;
        window.openFile(old);
        QTRY_COMPARE_WITH_TIMEOUT(boxes.texts.size(), 1, kTimeout);
        QVERIFY2(boxes.texts.first().contains("already exists"), qPrintable(boxes.texts.first()));
        QCOMPARE(QApplication::overrideCursor(), nullptr);
        QVERIFY(window.currentFile().isEmpty());
        QCOMPARE(testfiles::sha256Of(target_), QCryptographicHash::hash("keep me", QCryptographicHash::Sha256));
    }

    // Damaged pages in an older file: the migration fails in the background, the user is told,
    // and no partial copy is left.
    void aFailedMigrationLeavesNoCopy() {
        const QString old = schemaOne("damaged.allocscope");
        QFile file(old);
        QVERIFY(file.open(QIODevice::ReadWrite));
        QByteArray bytes = file.readAll();
        quint32 x = 777;
        for (qsizetype p = 2; (p + 1) * 4096 < bytes.size(); p += 2) {
            for (qsizetype i = 0; i < 4096; ++i) {
                x = x * 1664525u + 1013904223u;
                bytes[p * 4096 + i] = static_cast<char>(x >> 24);
            }
        }
        file.seek(0);
        file.write(bytes);
        file.close();
        target_ = dir_.filePath("damaged-migrated.allocscope");
        MessageBoxCatcher boxes;
        MainWindow window;
        window.openFile(old);
        QCOMPARE(askedSchema_, std::optional<int>(1));
        QTRY_COMPARE_WITH_TIMEOUT(boxes.texts.size(), 1, kTimeout);
        QVERIFY2(boxes.texts.first().contains(target_), qPrintable(boxes.texts.first()));
        QVERIFY(!QFileInfo::exists(target_));
        QVERIFY(!sidecarsBeside(target_));
        QVERIFY(window.currentFile().isEmpty());
        QCOMPARE(QApplication::overrideCursor(), nullptr);
    }

    void otherFilesNeverAsk_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("says");
        const QString newer = copyOfGood("newer.allocscope");
        execOn(newer, "PRAGMA user_version = " + std::to_string(storage::kSchemaVersion + 1));
        QTest::newRow("newer") << newer << "newer AllocScope";
        const QString other = dir_.filePath("other.allocscope");
        execOn(other, "CREATE TABLE photos(id INTEGER PRIMARY KEY)");
        QTest::newRow("another application") << other << "another application";
    }

    void otherFilesNeverAsk() {
        QFETCH(QString, file);
        QFETCH(QString, says);
        MessageBoxCatcher boxes;
        MainWindow window;
        window.openFile(file);
        QVERIFY(asked_.isEmpty());
        QTRY_COMPARE_WITH_TIMEOUT(boxes.texts.size(), 1, kTimeout);
        QVERIFY2(boxes.texts.first().contains(says), qPrintable(boxes.texts.first()));
        QVERIFY(window.currentFile().isEmpty());
    }

    // Without the test prompts the user sees the real question with Migrate… / Cancel; Cancel
    // writes nothing and shows no error.
    void theRealQuestionOffersMigrateOrCancel() {
        const QString old = schemaOne("asked.allocscope");
        const QStringList beforeFiles = QDir(dir_.path()).entryList(QDir::Files);
        SessionMigration::setPromptsForTesting({});
        QString text;
        QStringList buttons;
        QTimer clicker;
        clicker.setInterval(20);
        connect(&clicker, &QTimer::timeout, [&] {
            for (QWidget* w : QApplication::topLevelWidgets()) {
                auto* box = qobject_cast<QMessageBox*>(w);
                if (!box || !box->isVisible()) continue;
                text = box->text();
                for (QAbstractButton* b : box->buttons()) buttons << b->text().remove('&');
                box->button(QMessageBox::Cancel)->click();
            }
        });
        clicker.start();
        MainWindow window;
        window.openFile(old);
        clicker.stop();
        installPrompts();
        QCOMPARE(text, QStringLiteral("This session was written by an older AllocScope (schema 1). Migrate it into a copy?"));
        buttons.sort();
        QCOMPARE(buttons, QStringList({"Cancel", "Migrate…"}));
        QVERIFY(window.currentFile().isEmpty());
        QCOMPARE(QDir(dir_.path()).entryList(QDir::Files), beforeFiles);
    }

    void aCurrentSessionOpensWithoutAsking() {
        MainWindow window;
        QVERIFY(window.openFile(good_));
        QVERIFY(asked_.isEmpty());
        QCOMPARE(SessionMigration::olderSchemaOf(good_), std::nullopt);
        QTRY_COMPARE_WITH_TIMEOUT(window.runList()->model()->rowCount(), 2, kTimeout);
    }
};

QTEST_MAIN(TestSessionMigration)
#include "TestSessionMigration.moc"
