#include "app/gui/SessionDocument.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

#include "storage/session/SessionError.h"
#include "storage/session/SessionReader.h"
#include "storage/session/SessionWriter.h"

namespace allocscope::app {

SessionDocument::~SessionDocument() { closeWriter(); }

std::unique_ptr<SessionDocument> SessionDocument::open(const QString& path) {
    const std::string file = QFileInfo(path).absoluteFilePath().toStdString();
    { storage::SessionReader check(file, false); }  // throws SessionError for anything not a session
    std::unique_ptr<SessionDocument> doc(new SessionDocument);
    doc->path_ = QString::fromStdString(file);
    doc->integrityCheckDue_ = true;
    return doc;
}

bool SessionDocument::looksLikeSession(const QString& path) {
    if (path.endsWith(QLatin1String(".allocscope"), Qt::CaseInsensitive)) return true;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return false;
    return file.read(16) == QByteArray("SQLite format 3\0", 16);
}

std::unique_ptr<SessionDocument> SessionDocument::createTemporary(const QString& baseName) {
    std::unique_ptr<SessionDocument> doc(new SessionDocument);
    doc->temporaryDir_ = std::make_unique<QTemporaryDir>(QDir::tempPath() + QStringLiteral("/allocscope-XXXXXX"));
    if (!doc->temporaryDir_->isValid()) {
        throw storage::SessionError("cannot create a temporary directory: " + doc->temporaryDir_->errorString().toStdString(),
                                    QDir::tempPath().toStdString());
    }
    QString name = baseName;
    name.replace(QLatin1Char('/'), QLatin1Char('_'));
    doc->path_ = doc->temporaryDir_->filePath(name + QStringLiteral(".allocscope"));
    doc->writer();  // creates the empty session, so readers can open it at once
    doc->flush();
    return doc;
}

QString SessionDocument::displayName() const {
    const QString name = QFileInfo(path_).fileName();
    return isTemporary() ? name + QStringLiteral(" (unsaved)") : name;
}

storage::SessionWriter& SessionDocument::writer() {
    if (!writer_) writer_ = std::make_unique<storage::SessionWriter>(path_.toStdString());
    return *writer_;
}

void SessionDocument::flush() {
    if (writer_) writer_->flush();
}

void SessionDocument::closeWriter() { writer_.reset(); }

bool SessionDocument::saveAs(const QString& target, QString* error) {
    const QFileInfo targetInfo(target);
    const QString absolute = targetInfo.absoluteFilePath();
    const auto fail = [error](const QString& message) {
        if (error) *error = message;
        return false;
    };
    if (absolute == QFileInfo(path_).absoluteFilePath()) return fail(QStringLiteral("the session is already saved as %1").arg(absolute));
    if (!QFileInfo(targetInfo.absolutePath()).isWritable()) {
        return fail(QStringLiteral("cannot write to the folder %1").arg(targetInfo.absolutePath()));
    }
    const QString partial = absolute + QStringLiteral(".partial");
    try {
        closeWriter();  // commits and checkpoints: the file alone is the whole session
        QFile::remove(partial);
        storage::SessionReader reader(path_.toStdString(), false);
        std::string quoted = partial.toStdString();
        for (std::size_t i = 0; (i = quoted.find('\'', i)) != std::string::npos; i += 2) quoted.insert(i, 1, '\'');
        reader.db().exec("VACUUM INTO '" + quoted + "'");
    } catch (const storage::SessionError& e) {
        QFile::remove(partial);
        return fail(QStringLiteral("could not save the session to %1: %2").arg(absolute, QString::fromStdString(e.problem())));
    }
    if (QFile::exists(absolute) && !QFile::remove(absolute)) {
        QFile::remove(partial);
        return fail(QStringLiteral("cannot replace %1 (is it read-only?)").arg(absolute));
    }
    if (!QFile::rename(partial, absolute)) {
        QFile::remove(partial);
        return fail(QStringLiteral("cannot rename the saved copy to %1").arg(absolute));
    }
    path_ = absolute;
    temporaryDir_.reset();  // the temporary session (if any) goes; the saved copy is the document
    return true;
}

}  // namespace allocscope::app
