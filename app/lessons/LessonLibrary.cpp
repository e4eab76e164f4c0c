#include "app/lessons/LessonLibrary.h"

#include <algorithm>
#include <filesystem>

#include "app/lessons/DataDirectory.h"
#include "app/lessons/LessonError.h"
#include "app/lessons/LessonLoader.h"

namespace allocscope::app {
namespace {

// Edit distance, for "did you mean".
std::size_t distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = up;
        }
    }
    return row[b.size()];
}

}  // namespace

std::string LessonLibrary::defaultFolder() {
    return DataDirectory::locate("lessons", "ALLOCSCOPE_LESSONS_DIR");
}

std::vector<Lesson> LessonLibrary::load(const std::string& folder) {
    std::error_code ec;
    if (!std::filesystem::is_directory(folder, ec)) throw LessonError("no lesson folder there", folder);
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
        if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path().string());
    }
    if (ec) throw LessonError("cannot list the lesson folder: " + ec.message(), folder);
    std::sort(files.begin(), files.end());
    std::vector<Lesson> lessons;
    for (const std::string& file : files) {
        Lesson lesson = LessonLoader::loadFile(file);
        for (const Lesson& other : lessons) {
            if (other.name == lesson.name) throw LessonError("two lessons are called '" + lesson.name + "' (also in " + other.file + ")", file);
        }
        lessons.push_back(std::move(lesson));
    }
    std::stable_sort(lessons.begin(), lessons.end(), [](const Lesson& a, const Lesson& b) { return a.number < b.number; });
    return lessons;
}

Lesson LessonLibrary::find(const std::vector<Lesson>& lessons, const std::string& name, const std::string& folder) {
    const Lesson* nearest = nullptr;
    std::size_t best = ~std::size_t{0};
    for (const Lesson& lesson : lessons) {
        if (lesson.name == name || std::to_string(lesson.number) == name) return lesson;
        const std::size_t d = distance(lesson.name, name);
        if (d < best) {
            best = d;
            nearest = &lesson;
        }
    }
    std::string what = "no lesson '" + name + "'";
    if (nearest != nullptr && best <= std::max<std::size_t>(3, name.size() / 3)) what += " (did you mean '" + nearest->name + "'?)";
    throw LessonError(what + "; `allocscope-cli lessons` lists them", folder);
}

}  // namespace allocscope::app
