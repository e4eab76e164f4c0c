#include "app/gui/ReadOnlySessionPrompt.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QStandardPaths>

namespace allocscope::app {

bool ReadOnlySessionPrompt::isReadOnly(const QString& path) {
    const QFileInfo file(path);
    // The owner's write bit too: a file its owner marked read-only stays so even for root (who
    // may write anything).
    return !file.isWritable() || !file.permission(QFileDevice::WriteOwner) || !QFileInfo(file.absolutePath()).isWritable();
}

bool ReadOnlySessionPrompt::offerCopy(QWidget* parent, const QString& path, const std::function<bool(const QString& copy)>& saveAs) {
    if (!isReadOnly(path)) return true;
    const QString copy = askForCopy(parent, path);  // one question rather than a failed write
    return !copy.isEmpty() && saveAs(copy);
}

QString ReadOnlySessionPrompt::askForCopy(QWidget* parent, const QString& path) {
    const QFileInfo file(path);
    const auto answer = QMessageBox::question(
        parent, QObject::tr("Read-only session"),
        QObject::tr("The session %1 cannot be written (the file or its folder is read-only).\n"
                    "Run and Compare record new runs into the session. Save a copy and record into the copy?")
            .arg(file.absoluteFilePath()),
        QMessageBox::Save | QMessageBox::Cancel, QMessageBox::Save);
    if (answer != QMessageBox::Save) return QString();
    const QString folder = QFileInfo(file.absolutePath()).isWritable()
                               ? file.absolutePath()
                               : QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    QString copy = QFileDialog::getSaveFileName(parent, QObject::tr("Save a Copy of the Session"),
                                                QDir(folder).filePath(file.completeBaseName() + QStringLiteral("-copy.allocscope")),
                                                QObject::tr("Sessions (*.allocscope)"));
    if (!copy.isEmpty() && QFileInfo(copy).suffix().isEmpty()) copy += QStringLiteral(".allocscope");
    return copy;
}

}  // namespace allocscope::app
