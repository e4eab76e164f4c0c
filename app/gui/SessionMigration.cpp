#include "app/gui/SessionMigration.h"

#include <QApplication>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMainWindow>
#include <QMessageBox>
#include <QPointer>
#include <QPushButton>
#include <QSet>
#include <QStandardPaths>
#include <QStatusBar>

#include <memory>
#include <stdexcept>

#include "app/gui/BackgroundJob.h"
#include "storage/session/SchemaVersion.h"
#include "storage/session/SessionError.h"
#include "storage/session/SessionSchema.h"

namespace allocscope::app {
namespace {

SessionMigration::Prompts& prompts() {
    static SessionMigration::Prompts instance;
    return instance;
}

// The copies that background jobs are writing now (absolute paths). A second migration into one
// of them would find the file half written, fail, and remove the first one's copy.
QSet<QString>& targetsInFlight() {
    static QSet<QString> targets;
    return targets;
}

bool taken(const QString& path) {
    return QFileInfo::exists(path) || targetsInFlight().contains(QFileInfo(path).absoluteFilePath());
}

bool askUser(QWidget* parent, const QString& source, int schema) {
    if (prompts().ask) return prompts().ask(source, schema);
    QMessageBox box(QMessageBox::Question, SessionMigration::tr("Older session"),
                    SessionMigration::tr("This session was written by an older AllocScope (schema %1). Migrate it into a copy?")
                        .arg(schema),
                    QMessageBox::NoButton, parent);
    box.setInformativeText(SessionMigration::tr("%1\n\nThe copy is written at schema %2 and opened; the original stays as it is.")
                               .arg(QDir::toNativeSeparators(source))
                               .arg(storage::kSchemaVersion));
    QPushButton* migrate = box.addButton(SessionMigration::tr("Migrate…"), QMessageBox::AcceptRole);
    box.addButton(QMessageBox::Cancel);
    box.setDefaultButton(migrate);
    box.exec();
    return box.clickedButton() == migrate;
}

QString chooseTarget(QWidget* parent, const QString& suggested) {
    if (prompts().chooseTarget) return prompts().chooseTarget(suggested);
    // No overwrite confirmation: the migration never overwrites, an existing name is refused.
    QString path = QFileDialog::getSaveFileName(parent, SessionMigration::tr("Migrate Session Into"), suggested,
                                                SessionMigration::tr("Sessions (*.allocscope)"), nullptr,
                                                QFileDialog::DontConfirmOverwrite);
    if (!path.isEmpty() && QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".allocscope");
    return path;
}

void showStatus(QWidget* parent, const QString& message) {
    if (auto* window = qobject_cast<QMainWindow*>(parent)) window->statusBar()->showMessage(message);
}

}  // namespace

void SessionMigration::setPromptsForTesting(Prompts p) { prompts() = std::move(p); }

std::optional<int> SessionMigration::olderSchemaOf(const QString& path) {
    const std::string file = path.toStdString();
    try {
        const std::int64_t version = storage::SessionSchema::storedVersion(file);
        if (version < storage::kSchemaVersion) return static_cast<int>(version);
    } catch (const storage::SessionError&) {
    }
    return std::nullopt;
}

QString SessionMigration::suggestedTarget(const QString& source) {
    const QFileInfo info(source);
    QString folder = info.absolutePath();
    if (!QFileInfo(folder).isWritable()) {
        folder = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
        const QFileInfo documents(folder);
        if (folder.isEmpty() || !documents.isDir() || !documents.isWritable()) folder = QDir::homePath();
    }
    const QString base = info.completeBaseName() + QStringLiteral("-v%1").arg(storage::kSchemaVersion);
    QString candidate = QDir(folder).filePath(base + QStringLiteral(".allocscope"));
    for (int n = 2; taken(candidate) && n < 10000; ++n) {
        candidate = QDir(folder).filePath(base + QStringLiteral("-%1.allocscope").arg(n));
    }
    return candidate;
}

void SessionMigration::migrate(const QString& source, const QString& target,
                               const std::function<bool(quint64 done, quint64 total)>& progress) {
    if (QFileInfo::exists(target) || QFileInfo(target).isSymLink()) {
        throw std::runtime_error(tr("%1 already exists; a migration never overwrites a file, choose a new name.")
                                     .arg(QDir::toNativeSeparators(target))
                                     .toStdString());
    }
    const std::string from = source.toStdString();
    const std::string to = target.toStdString();
    try {
        // Checks that the copy opens intact and leaves nothing at `target` when anything fails.
        storage::SessionSchema::migrateToCopy(from, to, [&progress](std::uint64_t done, std::uint64_t total) {
            return !progress || progress(done, total);
        });
    } catch (const storage::SessionError& e) {
        throw std::runtime_error(tr("The migration into %1 failed: %2 (%3). Nothing was kept there.")
                                     .arg(QDir::toNativeSeparators(target), QString::fromStdString(e.problem()),
                                          QString::fromStdString(e.where()))
                                     .toStdString());
    }
}

bool SessionMigration::offer(QWidget* parent, const QString& source, std::function<void(const QString& copy)> open,
                             std::function<void(BackgroundJob* job)> started) {
    const std::optional<int> schema = olderSchemaOf(source);
    if (!schema) return false;
    if (!askUser(parent, source, *schema)) {
        showStatus(parent, tr("Not opened: %1 has the older schema %2").arg(QDir::toNativeSeparators(source)).arg(*schema));
        return true;
    }
    const QString target = chooseTarget(parent, suggestedTarget(source));
    if (target.isEmpty()) {
        showStatus(parent, tr("Migration cancelled"));
        return true;
    }
    const QString absoluteTarget = QFileInfo(target).absoluteFilePath();
    if (targetsInFlight().contains(absoluteTarget)) {
        QMessageBox::warning(parent, tr("Migration refused"),
                             tr("%1 is being written by another migration right now; choose another name.")
                                 .arg(QDir::toNativeSeparators(target)));
        return true;
    }
    targetsInFlight().insert(absoluteTarget);
    auto* job = new BackgroundJob(tr("Migrating %1").arg(QFileInfo(source).fileName()),
                                  [source, target](BackgroundJob& self) {
                                      migrate(source, target, [&self](quint64 done, quint64 total) {
                                          self.reportProgress(done, total);
                                          return !self.isCancelled();
                                      });
                                  },
                                  parent);
    // The busy cursor and the claim on the target go with the job: at its end, or when the
    // window (and with it the job) is destroyed before the copy is written.
    auto claimed = std::make_shared<bool>(true);
    const auto releaseCursor = [claimed, absoluteTarget] {
        if (*claimed) {
            QApplication::restoreOverrideCursor();
            targetsInFlight().remove(absoluteTarget);
        }
        *claimed = false;
    };
    auto failure = std::make_shared<QString>();
    QObject::connect(job, &BackgroundJob::failed, job, [failure](const QString& message) { *failure = message; });
    QObject::connect(job, &QObject::destroyed, releaseCursor);
    QObject::connect(job, &BackgroundJob::finished, job, [job, parent = QPointer<QWidget>(parent), source, target, failure,
                                                          releaseCursor, open = std::move(open)] {
        releaseCursor();
        job->deleteLater();
        if (job->isCancelled()) {
            showStatus(parent, tr("Migration cancelled: nothing was written"));
            return;
        }
        if (!failure->isEmpty()) {
            showStatus(parent, tr("Migration failed"));
            QMessageBox::warning(parent, tr("Migration failed"), *failure);
            return;
        }
        showStatus(parent, tr("Migrated %1 into %2").arg(QDir::toNativeSeparators(source), QDir::toNativeSeparators(target)));
        if (open) open(target);
    });
    QApplication::setOverrideCursor(Qt::BusyCursor);
    showStatus(parent, tr("Migrating %1 into %2…").arg(QDir::toNativeSeparators(source), QDir::toNativeSeparators(target)));
    job->start();
    if (started) started(job);
    return true;
}

}  // namespace allocscope::app
