import { defineMessages } from '../define.ts';

/** Messages of projects and their media spine. */
export const projectMessages = defineMessages({
  en: {
    'project.not_found': 'Project not found.',
    'project.limit_reached': 'Your {tier} plan allows {max} projects. Delete a project or upgrade your plan to create another.',
    'canvas.not_found': 'Canvas not found.',
    'spine.composed': 'This project has composed canvases (split clips, split screen, talking head, insert or grid); reorder them in the canvas editor instead.',
    'spine.incomplete': 'The order must name each media item of the project spine exactly once.',
  },
  pt: {
    'project.not_found': 'Projeto não encontrado.',
    'project.limit_reached': 'O seu plano {tier} permite {max} projetos. Apague um projeto ou mude de plano para criar outro.',
    'canvas.not_found': 'Tela não encontrada.',
    'spine.composed': 'Este projeto tem telas compostas (divisão, apresentador, inserção ou grelha); reordene-as no editor de telas.',
    'spine.incomplete': 'A ordem tem de indicar cada item de média da sequência do projeto exatamente uma vez.',
  },
  es: {
    'project.not_found': 'Proyecto no encontrado.',
    'project.limit_reached': 'Su plan {tier} permite {max} proyectos. Elimine un proyecto o mejore su plan para crear otro.',
    'canvas.not_found': 'Lienzo no encontrado.',
    'spine.composed': 'Este proyecto tiene lienzos compuestos (dividido, presentador, inserción o cuadrícula); reordénelos en el editor de lienzos.',
    'spine.incomplete': 'El orden debe indicar cada elemento multimedia de la secuencia del proyecto exactamente una vez.',
  },
});
