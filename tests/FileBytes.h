#pragma once
// A file's bytes, for tests that check input files are never written (compare before / after),
// read what a command wrote, or write the damaged inputs they feed in. One copy for every suite.
#include <QByteArray>
#include <QCryptographicHash>
#include <QFile>
#include <QString>
#include <QTemporaryDir>

#include <fstream>
#include <sstream>
#include <string>

namespace testfiles {

// The whole file ("" when it cannot be read).
inline std::string readBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// Writes `bytes` as file `name` in `dir` (a test's input file); returns its path.
inline std::string writeIn(const QTemporaryDir& dir, const char* name, const std::string& bytes) {
    const std::string path = dir.filePath(QString::fromLatin1(name)).toStdString();
    std::ofstream out(path, std::ios::binary);
    out << bytes;
    return path;
}

// SHA-256 of the file (empty when it cannot be read).
inline QByteArray sha256Of(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256);
}

}  // namespace testfiles
