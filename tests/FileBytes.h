#pragma once
// A file's bytes, for tests that check input files are never written (compare before / after)
// or read what a command wrote. One copy for every suite.
#include <QByteArray>
#include <QCryptographicHash>
#include <QFile>
#include <QString>

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

// SHA-256 of the file (empty when it cannot be read).
inline QByteArray sha256Of(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256);
}

}  // namespace testfiles
